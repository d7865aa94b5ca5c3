package io.hts.autoconfigure.actuate;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The error answers of HTS's endpoints: a status with a body that says what was wrong and what
 * would be accepted, whatever the application's error settings ({@code server.error.include-message}
 * is {@code never} by default, which empties the body of an exception's answer). The body is a
 * problem in the manner of RFC 9457: {@code status}, {@code title}, {@code detail}, and, for a bad
 * parameter, {@code parameter}, {@code value} (as sent) and {@code accepted}.
 */
final class EndpointProblems {

    private EndpointProblems() {}

    /**
     * A 400 for a parameter the endpoint cannot use.
     *
     * @param parameter the parameter's name
     * @param value its value as sent
     * @param detail what is wrong with it
     * @param accepted what would be accepted
     * @return the answer
     */
    static WebEndpointResponse<Map<String, Object>> badRequest(
            String parameter, @Nullable Object value, String detail, String accepted) {
        Map<String, Object> body = problem(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", detail);
        body.put("parameter", parameter);
        body.put("value", String.valueOf(value));
        body.put("accepted", accepted);
        return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_BAD_REQUEST);
    }

    /**
     * A 404 for a thing the endpoint does not have.
     *
     * @param detail what was not found, and why
     * @return the answer
     */
    static WebEndpointResponse<Map<String, Object>> notFound(String detail) {
        return new WebEndpointResponse<>(
                problem(WebEndpointResponse.STATUS_NOT_FOUND, "Not Found", detail),
                WebEndpointResponse.STATUS_NOT_FOUND);
    }

    /** The body every problem answer starts with, in this order: status, title, detail. */
    static Map<String, Object> problem(int status, String title, String detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        body.put("title", title);
        body.put("detail", detail);
        return body;
    }

    /** A parameter the endpoint cannot use: thrown while reading parameters, answered as its response. */
    static final class Bad extends RuntimeException {

        private static final long serialVersionUID = 1L;

        private final transient WebEndpointResponse<Map<String, Object>> response;

        Bad(WebEndpointResponse<Map<String, Object>> response) {
            super(String.valueOf(response.getBody().get("detail")), null, false, false);
            this.response = response;
        }

        WebEndpointResponse<Map<String, Object>> response() {
            return response;
        }
    }

    /**
     * A whole-number parameter, read here rather than by the web layer (whose refusal of
     * {@code ?runId=abc} would be a bare 400).
     *
     * @return the number, or {@code null} when the parameter is absent
     * @throws Bad when it is not a whole number from {@code min} to {@code max}
     */
    static @Nullable Long number(String parameter, @Nullable String value, long min, long max, String accepted) {
        if (value == null) {
            return null;
        }
        long n;
        try {
            n = Long.parseLong(value.trim());
        } catch (NumberFormatException ex) {
            throw new Bad(badRequest(parameter, value, "'" + value + "' is not a whole number", accepted));
        }
        if (n < min || n > max) {
            throw new Bad(badRequest(parameter, value, value + " is out of range", accepted));
        }
        return n;
    }
}
