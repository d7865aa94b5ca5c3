package io.hts.autoconfigure.actuate;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.http.MediaType;
import org.springframework.web.filter.OncePerRequestFilter;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A POST to {@code /actuator/hts} that the endpoint cannot serve gets an answer that says why and
 * what would be accepted, in the JSON of the endpoint's other problems, instead of a bare status:
 * <ul>
 *   <li>while the endpoint is read-only (its default): 405, naming
 *       {@code management.endpoint.hts.access} and that writing should be protected once granted;
 *   <li>a body that is not a JSON object of plain values (malformed, another JSON value, a value
 *       that is an object or an array, over 64 KiB, not in its declared charset): 400, naming
 *       what was wrong and the accepted forms, {@code {"policy": "round-robin"}},
 *       {@code {"cancelRun": 42}} and {@code {"run": "features"}}; without this, Spring MVC refuses it before HTS sees it, with
 *       Boot's error body, which says nothing under its default error settings.
 * </ul>
 * Registered on that one path (the endpoint's path mapping and the dispatcher servlet's path
 * applied); any other request passes through, a POST with a JSON object too (its body buffered
 * and handed on; a blank body handed on empty, as the endpoint takes it).
 */
final class HtsWriteRequestFilter extends OncePerRequestFilter {

    private static final EndpointId HTS = EndpointId.of("hts");
    /** The largest body read: the accepted ones are a few dozen bytes. */
    static final int MAX_BODY = 64 * 1024;

    private static final String ACCEPTED =
            "a JSON object: {\"policy\": \"round-robin\"} (default, gpu-first, cpu-first,"
                    + " round-robin or shortest-job-first), {\"cancelRun\": 42} (the id of an active run)"
                    + " and/or {\"run\": \"features\"} (the name of a registered graph)";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final EndpointAccessResolver access;

    HtsWriteRequestFilter(EndpointAccessResolver access) {
        this.access = access;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !"POST".equals(request.getMethod());
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (access.accessFor(HTS, Access.READ_ONLY) != Access.UNRESTRICTED) {
            response.setHeader("Allow", "GET");
            Map<String, Object> problem = EndpointProblems.problem(
                    HttpServletResponse.SC_METHOD_NOT_ALLOWED,
                    "Method Not Allowed",
                    "the hts endpoint is read-only: switching the policy, cancelling runs and starting runs"
                            + " need write access");
            problem.put("parameter", "management.endpoint.hts.access");
            problem.put(
                    "accepted",
                    "unrestricted, to allow a POST (protect the endpoint then: Spring Security, or a"
                            + " management port of its own)");
            write(response, problem);
            return;
        }
        byte[] body = request.getInputStream().readNBytes(MAX_BODY + 1);
        boolean blank = body.length <= MAX_BODY && new String(body, StandardCharsets.ISO_8859_1).isBlank();
        String wrong = blank ? null : whatIsWrong(body, declaredCharset(request));
        if (wrong != null) {
            Map<String, Object> problem =
                    EndpointProblems.problem(HttpServletResponse.SC_BAD_REQUEST, "Bad Request", wrong);
            problem.put("accepted", ACCEPTED);
            write(response, problem);
            return;
        }
        chain.doFilter(new BufferedBody(request, blank ? new byte[0] : body), response);
    }

    /**
     * The charset the request's Content-Type names, as Spring's JSON converter reads it (not the
     * request's character encoding, which a character-encoding filter may force), or null.
     */
    private static @Nullable String declaredCharset(HttpServletRequest request) {
        try {
            String type = request.getContentType();
            Charset charset =
                    type == null ? null : MediaType.parseMediaType(type).getCharset();
            return charset == null ? null : charset.name();
        } catch (RuntimeException ex) {
            return null; // a malformed Content-Type: Spring MVC answers it
        }
    }

    /** Why a body that is not blank is not a JSON object of plain values, or null when it is one. */
    private static @Nullable String whatIsWrong(byte[] body, @Nullable String charset) {
        if (body.length > MAX_BODY) {
            return "the body is larger than " + MAX_BODY / 1024 + " KiB";
        }
        JsonNode tree;
        try {
            // in the charset the request declares, as Spring's converter reads it; else as JSON detects it
            tree = charset == null ? JSON.readTree(body) : JSON.readTree(new String(body, Charset.forName(charset)));
        } catch (JacksonException ex) {
            String message = ex.getOriginalMessage();
            return "the body is not JSON ("
                    + (message == null
                            ? ex.getClass().getSimpleName()
                            : message.lines().findFirst().orElse(message)) + ")";
        } catch (IllegalArgumentException ex) {
            return "the body's charset '" + charset + "' is not one this server knows";
        }
        if (!tree.isObject()) {
            return "the body is JSON but not an object: "
                    + tree.getNodeType().name().toLowerCase(Locale.ROOT);
        }
        for (Map.Entry<String, JsonNode> field : tree.properties()) {
            if (field.getValue().isObject() || field.getValue().isArray()) {
                String kind = field.getValue().isObject() ? "an object" : "an array";
                return "the value of '" + field.getKey() + "' is " + kind + "; each value is a string or a number";
            }
        }
        return null;
    }

    private static void write(HttpServletResponse response, Map<String, Object> problem) throws IOException {
        response.setStatus((Integer) problem.get("status"));
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write(JSON.writeValueAsString(problem));
    }

    /** The request with its body read into memory, served again to the endpoint. */
    private static final class BufferedBody extends HttpServletRequestWrapper {

        private final byte[] body;

        BufferedBody(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            ByteArrayInputStream in = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public boolean isFinished() {
                    return in.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("the body is already read");
                }

                @Override
                public int read() {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    return in.read(b, off, len);
                }
            };
        }

        @Override
        public BufferedReader getReader() {
            String encoding = getCharacterEncoding();
            Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
            return new BufferedReader(new InputStreamReader(getInputStream(), charset));
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }
    }
}
