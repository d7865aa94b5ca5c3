package io.hts.autoconfigure.actuate;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.http.MediaType;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A POST to {@code /actuator/hts} while the endpoint is read-only (its default) answers 405 with a
 * body that says why and what enables it, instead of a bare "Method Not Allowed": the access is
 * {@code management.endpoint.hts.access}, and writing should be protected once granted. Registered
 * on that one path; any other request, and any POST once access is unrestricted, passes through.
 */
final class HtsReadOnlyWriteFilter extends OncePerRequestFilter {

    private static final EndpointId HTS = EndpointId.of("hts");

    private final EndpointAccessResolver access;

    HtsReadOnlyWriteFilter(EndpointAccessResolver access) {
        this.access = access;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !"POST".equals(request.getMethod()) || access.accessFor(HTS, Access.READ_ONLY) == Access.UNRESTRICTED;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        response.setStatus(HttpServletResponse.SC_METHOD_NOT_ALLOWED);
        response.setHeader("Allow", "GET");
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.getWriter().write("{\"status\":405,\"title\":\"Method Not Allowed\",\"detail\":\"the hts endpoint is"
                + " read-only: switching the policy and cancelling runs need write access\",\"parameter\":"
                + "\"management.endpoint.hts.access\",\"accepted\":\"unrestricted, to allow a POST (protect the"
                + " endpoint then: Spring Security, or a management port of its own)\"}");
    }
}
