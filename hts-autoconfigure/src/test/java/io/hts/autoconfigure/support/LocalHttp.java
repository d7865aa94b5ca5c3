package io.hts.autoconfigure.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.springframework.context.ApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Real HTTP to a test's own server on 127.0.0.1 (started with {@code server.port=0}): the one
 * client the endpoint tests share, each request bounded by 20 s.
 */
public final class LocalHttp {

    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private LocalHttp() {}

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
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(port, path)).GET();
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return send(request);
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
        return send(HttpRequest.newBuilder(uri(port, path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    /** A response's body as JSON. */
    public static JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    private static URI uri(int port, String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return CLIENT.send(request.timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
    }
}
