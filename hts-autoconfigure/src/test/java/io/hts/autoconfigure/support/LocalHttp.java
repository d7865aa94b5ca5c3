package io.hts.autoconfigure.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Real HTTP to a test's own server on 127.0.0.1 (started with {@code server.port=0}): the one
 * client the endpoint tests share, each request bounded by 20 s. An event stream is read through
 * {@link EventStream}, over the same client.
 */
public final class LocalHttp {

    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private LocalHttp() {}

    /**
     * {@code application} as a server for this client: on 127.0.0.1 and a free port, without the
     * banner; {@code run()} starts it, {@link #port} says where it listens. More properties are
     * added with {@code properties(...)}.
     */
    public static SpringApplicationBuilder server(Class<?> application) {
        return new SpringApplicationBuilder(application)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off");
    }

    /** The port the context's web server listens on. */
    public static int port(ApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getRequiredProperty("local.server.port"));
    }

    /**
     * A GET of {@code path} on the server of port {@code port}.
     *
     * @param headers names and values, alternating
     */
    public static HttpResponse<String> get(int port, String path, String... headers) throws Exception {
        return send(request(port, path, headers));
    }

    /** A GET whose body is kept as the bytes the server sent, not decoded. */
    public static HttpResponse<byte[]> getBytes(int port, String path) throws Exception {
        return CLIENT.send(request(port, path).timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** A GET of {@code path} on the context's server. */
    public static HttpResponse<String> get(ApplicationContext context, String path) throws Exception {
        return get(port(context), path);
    }

    /** A GET that must answer 200, read as JSON. */
    public static JsonNode getJson(ApplicationContext context, String path) throws Exception {
        HttpResponse<String> r = get(context, path);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return json(r);
    }

    /** A POST of a JSON body. */
    public static HttpResponse<String> postJson(int port, String path, String json) throws Exception {
        return send(port, "POST", path, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A POST of a JSON body with headers (credentials, a CSRF token).
     *
     * @param headers names and values, alternating
     */
    public static HttpResponse<String> postJson(int port, String path, String json, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(port, path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return send(request);
    }

    /** The same POST, answered later: for many requests at once. */
    public static CompletableFuture<HttpResponse<String>> postJsonAsync(int port, String path, String json) {
        return CLIENT.sendAsync(
                HttpRequest.newBuilder(uri(port, path))
                        .timeout(TIMEOUT)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Any method with any body, as a hostile client sends it.
     *
     * @param contentType the Content-Type header, or {@code null} for none
     * @param body the bytes, or {@code null} for no body
     */
    public static HttpResponse<String> send(
            int port, String method, String path, @Nullable String contentType, byte @Nullable [] body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(port, path))
                .method(
                        method,
                        body == null
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        return send(request);
    }

    /** A JSON POST whose body goes chunked (no Content-Length). */
    public static HttpResponse<String> postJsonChunked(int port, String path, byte[] body) throws Exception {
        return send(HttpRequest.newBuilder(uri(port, path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))));
    }

    /** A response's body as JSON. */
    public static JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    /**
     * A GET whose body is read as it arrives, line by line: for a response that does not end by
     * itself (an event stream). Only the wait for its status and headers is bounded by 20 s, not
     * its body.
     *
     * @param headers names and values, alternating
     */
    static HttpResponse<Stream<String>> getLines(int port, String path, String... headers) throws Exception {
        return CLIENT.sendAsync(request(port, path, headers).build(), HttpResponse.BodyHandlers.ofLines())
                .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    private static HttpRequest.Builder request(int port, String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(port, path)).GET();
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return request;
    }

    private static URI uri(int port, String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return CLIENT.send(request.timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
    }
}
