package io.hts.autoconfigure.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.util.MimeType;
import org.springframework.web.util.UriUtils;

/**
 * {@code /actuator/htsdashboard}: the dashboard's page, and under it its scripts and styles
 * ({@code /actuator/htsdashboard/dashboard.js}) and ECharts from its WebJar
 * ({@code /actuator/htsdashboard/lib/echarts.min.js}). Nothing else is served: a name is looked up
 * among the dashboard's own files (letters, digits and dashes, one extension), never resolved as a
 * path. The page reads {@code hts}, {@code htsprofiler} and {@code htsevents} under the same base
 * path, each at its path mapping, which the page is given. A web endpoint, so it is exposed,
 * secured and placed (management port, base path) like the endpoints it reads. Read-only.
 */
@WebEndpoint(id = "htsdashboard", defaultAccess = Access.READ_ONLY)
public class HtsDashboardEndpoint {

    /** Where the dashboard's files are in the jar (not a folder Spring Boot serves by itself). */
    static final String FILES = "io/hts/autoconfigure/dashboard/";

    private static final String ECHARTS = "classpath*:META-INF/resources/webjars/echarts/*/dist/echarts.min.js";
    private static final Pattern NAME = Pattern.compile("[a-z0-9-]+\\.(js|css|svg)");
    private static final Map<String, MimeType> TYPES = Map.of(
            "js", MimeType.valueOf("text/javascript;charset=UTF-8"),
            "css", MimeType.valueOf("text/css;charset=UTF-8"),
            "svg", MimeType.valueOf("image/svg+xml"));
    private static final MimeType HTML = MimeType.valueOf("text/html;charset=UTF-8");
    private static final String CONFIG_MARK = "<!-- hts-config -->";

    /** How the page names its own files: {@code "htsdashboard/dashboard.js"}, relative to the page. */
    private static final String FILES_MARK = "\"htsdashboard/";

    /** The page as served at its own path ({@code /actuator/htsdashboard}): its files one segment down. */
    private final String page;
    /** The page as served with a trailing slash ({@code /actuator/htsdashboard/}): its files beside it. */
    private final String pageInFolder;

    private final @Nullable Resource echarts;

    /**
     * Creates the endpoint.
     *
     * @param paths the path mapping of each endpoint the page reads ({@code hts},
     *     {@code htsprofiler}, {@code htsevents}) and of this one, by endpoint id, relative to the
     *     base path; an id missing keeps its id as its path
     */
    public HtsDashboardEndpoint(Map<String, String> paths) {
        Map<String, String> endpoints = new LinkedHashMap<>();
        for (String id : new String[] {"hts", "htsprofiler", "htsevents", "htsdashboard"}) {
            endpoints.put(id, paths.getOrDefault(id, id));
        }
        // the files' addresses are relative to the page's: under the last segment of its path mapping
        String mapping = endpoints.get("htsdashboard").replaceAll("/+$", "");
        String last = mapping.substring(mapping.lastIndexOf('/') + 1);
        String html = read(new ClassPathResource(FILES + "index.html"));
        String config = "<script id=\"hts-config\" type=\"application/json\">" + json(endpoints) + "</script>";
        this.page = html.replace(
                        FILES_MARK, "\"" + attribute(UriUtils.encodePathSegment(last, StandardCharsets.UTF_8)) + "/")
                .replace(CONFIG_MARK, config);
        this.pageInFolder = html.replace(FILES_MARK, "\"./").replace(CONFIG_MARK, config);
        this.echarts = echarts();
    }

    /**
     * The dashboard's page.
     *
     * @return the HTML
     */
    @ReadOperation(produces = "text/html")
    public WebEndpointResponse<String> page() {
        return new WebEndpointResponse<>(page, HTML);
    }

    /**
     * One of the dashboard's files.
     *
     * @param path {@code dashboard.js}, {@code lib/echarts.min.js} and the like
     * @return the file; a 404 for anything else
     */
    @ReadOperation
    public WebEndpointResponse<?> file(@Selector(match = Selector.Match.ALL_REMAINING) String[] path) {
        if (path.length == 0 || (path.length == 1 && path[0].isEmpty())) {
            return new WebEndpointResponse<>(pageInFolder, HTML); // with a trailing slash
        }
        if (path.length == 2 && path[0].equals("lib") && path[1].equals("echarts.min.js") && echarts != null) {
            return new WebEndpointResponse<>(echarts, TYPES.get("js"));
        }
        if (path.length == 1 && NAME.matcher(path[0]).matches()) {
            Resource file = new ClassPathResource(FILES + path[0]);
            if (file.exists()) {
                String extension = path[0].substring(path[0].lastIndexOf('.') + 1);
                return new WebEndpointResponse<>(file, TYPES.get(extension));
            }
        }
        return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
    }

    /** ECharts' script from its WebJar, whatever its version; null when the WebJar is not there. */
    private static @Nullable Resource echarts() {
        try {
            Resource[] found = new PathMatchingResourcePatternResolver(HtsDashboardEndpoint.class.getClassLoader())
                    .getResources(ECHARTS);
            return found.length == 0 ? null : found[0];
        } catch (IOException ex) {
            return null;
        }
    }

    private static String read(Resource resource) {
        try (InputStream in = resource.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException("the dashboard's " + resource + " is missing from the jar", ex);
        }
    }

    /** A map of plain strings as JSON, safe inside a script element. */
    static String json(Map<String, String> values) {
        StringBuilder out = new StringBuilder("{");
        values.forEach((k, v) -> {
            if (out.length() > 1) {
                out.append(',');
            }
            out.append(quote(k)).append(':').append(quote(v));
        });
        return out.append('}').toString();
    }

    /** Text safe inside a double-quoted HTML attribute. */
    private static String attribute(String s) {
        return s.replace("&", "&amp;")
                .replace("\"", "&quot;")
                .replace("<", "&lt;")
                .replace(">", "&gt;");
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\' || c < 0x20 || c == '<' || c == '>' || c == '&') {
                out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
