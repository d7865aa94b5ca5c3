package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.FeaturesApp;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.run.Scheduler;
import java.net.http.HttpResponse;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Attacks on {@link HtsWriteRequestFilter}: what a POST to /actuator/hts gets, over real HTTP.
 */
class WriteRequestAttackTests {

    static final JsonMapper JSON = JsonMapper.builder().build();
    /** The HTS problem body: status, title, detail and accepted. */
    static JsonNode htsProblem(HttpResponse<String> r, int status) {
        assertThat(r.statusCode()).as("status; body %s", r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
        JsonNode problem = JSON.readTree(r.body());
        assertThat(problem.has("title"))
                .as("HTS problem body, not Boot's: %s", r.body())
                .isTrue();
        assertThat(problem.get("status").asInt()).isEqualTo(status);
        assertThat(problem.get("detail").asText()).isNotBlank();
        assertThat(problem.get("accepted").asText()).isNotBlank();
        return problem;
    }

    static String policyObject(int size) {
        String head = "{\"policy\":\"round-robin\",\"pad\":\"";
        String tail = "\"}";
        return head + "x".repeat(size - head.length() - tail.length()) + tail;
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler",
                "management.endpoint.hts.access=unrestricted"
            })
    class Unrestricted {

        @LocalServerPort
        int port;

        @Autowired
        Scheduler scheduler;

        void reset() throws Exception {
            assertThat(LocalHttp.postJson(port, "/actuator/hts", "{\"policy\":\"default\"}")
                            .statusCode())
                    .isEqualTo(200);
        }

        @Test
        void exactly64KiBPassesAnd64KiBPlusOneIsRefused() throws Exception {
            reset();
            String ok = policyObject(64 * 1024);
            assertThat(ok.getBytes(StandardCharsets.UTF_8)).hasSize(65536);
            HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/hts", ok);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(scheduler.policy().name()).isEqualTo("round-robin");
            reset();
            JsonNode p = htsProblem(LocalHttp.postJson(port, "/actuator/hts", policyObject(64 * 1024 + 1)), 400);
            assertThat(p.get("detail").asText()).contains("larger than 64 KiB");
            assertThat(scheduler.policy().name()).isEqualTo("default");
        }

        @Test
        void chunkedBodiesAreReadAndLimited() throws Exception {
            reset();
            HttpResponse<String> r = LocalHttp.postJsonChunked(
                    port, "/actuator/hts", "{\"policy\":\"cpu-first\"}".getBytes(StandardCharsets.UTF_8));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(scheduler.policy().name()).isEqualTo("cpu-first");
            htsProblem(
                    LocalHttp.postJsonChunked(
                            port, "/actuator/hts", policyObject(64 * 1024 + 1).getBytes(StandardCharsets.UTF_8)),
                    400);
            htsProblem(LocalHttp.postJsonChunked(port, "/actuator/hts", "[1,2]".getBytes(StandardCharsets.UTF_8)), 400);
        }

        /** Far over the limit: the 400 must still reach the client (the server stops reading after 64 KiB). */
        @Test
        void aBodyOfSeveralMegabytesStillGetsThe400() throws Exception {
            reset();
            HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/hts", policyObject(8 * 1024 * 1024));
            JsonNode p = htsProblem(r, 400);
            assertThat(p.get("detail").asText()).contains("larger than 64 KiB");
        }

        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {"UTF-16", "UTF-16LE", "UTF-16BE"})
        void utf16JsonPasses(String cs) throws Exception {
            reset();
            byte[] body = "{\"policy\":\"gpu-first\"}".getBytes(Charset.forName(cs));
            HttpResponse<String> r =
                    LocalHttp.send(port, "POST", "/actuator/hts", "application/json;charset=" + cs, body);
            assertThat(r.statusCode()).as("%s: %s", cs, r.body()).isEqualTo(200);
            assertThat(scheduler.policy().name()).as(cs).isEqualTo("gpu-first");
        }

        @Test
        void utf8JsonWithABomPasses() throws Exception {
            reset();
            byte[] bom = "\uFEFF{\"policy\":\"cpu-first\"}".getBytes(StandardCharsets.UTF_8);
            HttpResponse<String> r = LocalHttp.send(port, "POST", "/actuator/hts", "application/json", bom);
            assertThat(r.statusCode()).as("UTF-8 BOM: %s", r.body()).isEqualTo(200);
            assertThat(scheduler.policy().name()).isEqualTo("cpu-first");
        }

        /**
         * A Latin-1 body that declares its charset: Spring MVC reads it in that charset (the
         * endpoint ignores the unknown key); the filter must not call it "not JSON".
         */
        @Test
        void aLatin1BodyWithItsCharsetDeclaredPasses() throws Exception {
            reset();
            byte[] body =
                    "{\"policy\":\"round-robin\",\"requestedBy\":\"Jos\u00e9\"}".getBytes(StandardCharsets.ISO_8859_1);
            HttpResponse<String> r =
                    LocalHttp.send(port, "POST", "/actuator/hts", "application/json;charset=ISO-8859-1", body);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(scheduler.policy().name()).isEqualTo("round-robin");
        }

        @Test
        void emptyBodyAndEmptyObjectChangeNothing() throws Exception {
            reset();
            HttpResponse<String> empty = LocalHttp.send(port, "POST", "/actuator/hts", "application/json", new byte[0]);
            System.out.println("EMPTY BODY: " + empty.statusCode() + " " + empty.body());
            assertThat(empty.statusCode()).as(empty.body()).isIn(200, 400);
            if (empty.statusCode() == 400) {
                htsProblem(empty, 400);
            }
            HttpResponse<String> obj = LocalHttp.postJson(port, "/actuator/hts", "{}");
            assertThat(obj.statusCode()).as(obj.body()).isEqualTo(200);
            assertThat(scheduler.policy().name()).isEqualTo("default");
        }

        /** Whitespace only: not a JSON object; the filter lets it through as "empty". */
        @Test
        void aWhitespaceOnlyBodyGetsTheHtsProblemOrIsTreatedAsEmpty() throws Exception {
            reset();
            HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/hts", "  \r\n\t ");
            assertThat(r.statusCode()).as(r.body()).isIn(200, 400);
            if (r.statusCode() == 400) {
                htsProblem(r, 400);
            }
        }

        @Test
        void aJsonNullLiteralIsRefusedByHts() throws Exception {
            JsonNode p = htsProblem(LocalHttp.postJson(port, "/actuator/hts", "null"), 400);
            assertThat(p.get("detail").asText()).contains("not an object");
            htsProblem(LocalHttp.postJson(port, "/actuator/hts", "42"), 400);
            htsProblem(LocalHttp.postJson(port, "/actuator/hts", "true"), 400);
        }

        /**
         * A JSON object whose value is itself an object or an array: it is a JSON object, so the
         * filter lets it through, and Spring MVC (which reads the body as Map<String, String>)
         * refuses it with Boot's error body, the very answer the filter exists to replace.
         */
        @ParameterizedTest(name = "{0}")
        @ValueSource(
                strings = {
                    "{\"cancelRun\": {\"id\": 42}}",
                    "{\"policy\": [\"round-robin\"]}",
                    "{\"policy\":\"round-robin\",\"options\":{\"a\":1}}"
                })
        void aJsonObjectWithANonScalarValueGetsTheHtsProblemNotBootsErrorBody(String body) throws Exception {
            HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/hts", body);
            assertThat(r.statusCode()).as(body).isEqualTo(400);
            assertThat(JSON.readTree(r.body()).has("detail"))
                    .as("%s -> %s", body, r.body())
                    .isTrue();
        }

        @Test
        void deepJsonIsRefusedWithTheHtsProblem() throws Exception {
            String deep = "{\"a\":" + "[".repeat(5000) + "]".repeat(5000) + "}";
            HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/hts", deep);
            System.out.println("DEEP: " + r.statusCode() + " " + r.body());
            JsonNode p = htsProblem(r, 400);
            assertThat(p.get("detail").asText()).isNotBlank();
        }

        @Test
        void trailingTokensAndTwoObjects() throws Exception {
            reset();
            for (String body :
                    new String[] {"{\"policy\":\"round-robin\"} garbage", "{\"policy\":\"round-robin\"}{\"x\":1}"}) {
                HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/hts", body);
                System.out.println("TRAILING: " + body + " -> " + r.statusCode() + " " + r.body());
                if (r.statusCode() == 400) {
                    htsProblem(r, 400);
                } else {
                    assertThat(r.statusCode()).as("%s -> %s", body, r.body()).isEqualTo(200);
                }
            }
        }

        @Test
        void duplicateKeysUnknownKeysAndNumbersAsStrings() throws Exception {
            reset();
            HttpResponse<String> dup =
                    LocalHttp.postJson(port, "/actuator/hts", "{\"policy\":\"gpu-first\",\"policy\":\"cpu-first\"}");
            assertThat(dup.statusCode()).as(dup.body()).isEqualTo(200);
            assertThat(scheduler.policy().name()).as("last wins").isEqualTo("cpu-first");
            HttpResponse<String> unknown = LocalHttp.postJson(port, "/actuator/hts", "{\"polcy\":\"gpu-first\"}");
            System.out.println("UNKNOWN KEY: " + unknown.statusCode() + " " + unknown.body());
            assertThat(unknown.statusCode()).as(unknown.body()).isIn(200, 400);
            HttpResponse<String> asString = LocalHttp.postJson(port, "/actuator/hts", "{\"cancelRun\":\"424242\"}");
            assertThat(asString.statusCode()).as(asString.body()).isEqualTo(404);
            HttpResponse<String> notNumber = LocalHttp.postJson(port, "/actuator/hts", "{\"cancelRun\":\"abc\"}");
            assertThat(notNumber.statusCode()).as(notNumber.body()).isEqualTo(400);
            assertThat(notNumber.body()).contains("cancelRun");
            HttpResponse<String> frac = LocalHttp.postJson(port, "/actuator/hts", "{\"cancelRun\":4.5}");
            assertThat(frac.statusCode()).as(frac.body()).isEqualTo(400);
        }

        @Test
        void aPolicyWithOddCasing() throws Exception {
            reset();
            HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/hts", "{\"policy\":\"Round-Robin\"}");
            System.out.println("ODD CASING: " + r.statusCode() + " " + r.body());
            assertThat(r.statusCode()).as(r.body()).isIn(200, 400);
            if (r.statusCode() == 200) {
                assertThat(scheduler.policy().name()).isEqualTo("round-robin");
            } else {
                assertThat(r.body()).contains("round-robin");
            }
        }

        @Test
        void otherContentTypes() throws Exception {
            List<String> seen = new ArrayList<>();
            String obj = "{\"policy\":\"round-robin\"}";
            for (String ct : new String[] {
                "text/plain", "application/x-www-form-urlencoded", null, "application/vnd.spring-boot.actuator.v3+json"
            }) {
                reset();
                HttpResponse<String> r =
                        LocalHttp.send(port, "POST", "/actuator/hts", ct, obj.getBytes(StandardCharsets.UTF_8));
                seen.add(ct + " -> " + r.statusCode() + " " + r.body());
            }
            System.out.println("CONTENT TYPES: " + seen);
            assertThat(seen.get(3)).startsWith("application/vnd.spring-boot.actuator.v3+json -> 200");
        }

        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {"PUT", "DELETE", "PATCH"})
        void otherMethodsOnTheHtsEndpointAre405(String m) throws Exception {
            HttpResponse<String> r = LocalHttp.send(
                    port, m, "/actuator/hts", "application/json", "{\"policy\":\"cpu-first\"}".getBytes());
            assertThat(r.statusCode()).as("%s -> %s", m, r.body()).isEqualTo(405);
        }

        @Test
        void otherMethodsAndEndpointsAreUnaffected() throws Exception {
            assertThat(LocalHttp.send(port, "GET", "/actuator/hts", null, null).statusCode())
                    .isEqualTo(200);
            assertThat(LocalHttp.send(port, "HEAD", "/actuator/hts", null, null).statusCode())
                    .isEqualTo(200);
            assertThat(LocalHttp.send(port, "GET", "/actuator/htsevents", null, null)
                            .statusCode())
                    .isEqualTo(200);
            assertThat(LocalHttp.send(port, "GET", "/actuator/htsprofiler", null, null)
                            .statusCode())
                    .isEqualTo(200);
            HttpResponse<String> r =
                    LocalHttp.send(port, "POST", "/actuator/htsevents", "application/json", "[1]".getBytes());
            assertThat(r.statusCode())
                    .as("the filter is on /actuator/hts only: %s", r.body())
                    .isEqualTo(405);
            HttpResponse<String> sub =
                    LocalHttp.send(port, "POST", "/actuator/hts/x", "application/json", "[1]".getBytes());
            assertThat(sub.statusCode()).as(sub.body()).isNotEqualTo(200);
        }

        @Test
        void concurrentPostsAllSucceedAndTheLastPolicyIsOneOfThem() throws Exception {
            String[] policies = {"default", "gpu-first", "cpu-first", "round-robin", "shortest-job-first"};
            List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                String body = i % 7 == 0 ? "[\"bad\"]" : "{\"policy\":\"" + policies[i % policies.length] + "\"}";
                all.add(LocalHttp.postJsonAsync(port, "/actuator/hts", body));
            }
            for (int i = 0; i < all.size(); i++) {
                HttpResponse<String> r = all.get(i).get(60, TimeUnit.SECONDS);
                if (i % 7 == 0) {
                    htsProblem(r, 400);
                } else {
                    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                    assertThat(JSON.readTree(r.body()).get("policy").asText()).isEqualTo(policies[i % policies.length]);
                }
            }
            assertThat(List.of(policies)).contains(scheduler.policy().name());
        }
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts",
                "management.endpoint.hts.access=unrestricted",
                "management.server.port=0"
            })
    class ManagementPortOfItsOwn {

        @LocalManagementPort
        int managementPort;

        @LocalServerPort
        int port;

        @Test
        void theFilterAnswersOnTheManagementPort() throws Exception {
            assertThat(managementPort).isNotEqualTo(port);
            htsProblem(LocalHttp.postJson(managementPort, "/actuator/hts", "[1]"), 400);
            assertThat(LocalHttp.postJson(managementPort, "/actuator/hts", "{\"policy\":\"cpu-first\"}")
                            .statusCode())
                    .isEqualTo(200);
            assertThat(LocalHttp.postJson(port, "/actuator/hts", "{\"policy\":\"cpu-first\"}")
                            .statusCode())
                    .as("not on the app port")
                    .isEqualTo(404);
        }
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts",
                "management.server.port=0",
                "management.server.base-path=/mgmt"
            })
    class ManagementPortWithBasePathReadOnly {

        @LocalManagementPort
        int managementPort;

        @Test
        void aPostIsThe405Problem() throws Exception {
            JsonNode p = htsProblem(
                    LocalHttp.postJson(managementPort, "/mgmt/actuator/hts", "{\"policy\":\"cpu-first\"}"), 405);
            assertThat(p.get("parameter").asText()).isEqualTo("management.endpoint.hts.access");
        }
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts",
                "management.endpoint.hts.access=unrestricted",
                "management.endpoints.web.base-path=/manage",
                "server.servlet.context-path=/app"
            })
    class BasePathAndContextPath {

        @LocalServerPort
        int port;

        @Test
        void theFilterFollowsBothPaths() throws Exception {
            htsProblem(LocalHttp.postJson(port, "/app/manage/hts", "[1]"), 400);
            assertThat(LocalHttp.postJson(port, "/app/manage/hts", "{\"policy\":\"cpu-first\"}")
                            .statusCode())
                    .isEqualTo(200);
        }
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts",
                "management.endpoint.hts.access=unrestricted",
                "management.endpoints.web.base-path=/"
            })
    class RootBasePath {

        @LocalServerPort
        int port;

        @Test
        void theFilterIsOnSlashHts() throws Exception {
            htsProblem(LocalHttp.postJson(port, "/hts", "[1]"), 400);
        }
    }

    /** management.endpoints.web.path-mapping.hts: the endpoint moves, the filter must move with it. */
    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts",
                "management.endpoints.web.path-mapping.hts=scheduler"
            })
    class PathMappedReadOnly {

        @LocalServerPort
        int port;

        @Test
        void aPostToTheMappedPathIsThe405Problem() throws Exception {
            assertThat(LocalHttp.send(port, "GET", "/actuator/scheduler", null, null)
                            .statusCode())
                    .isEqualTo(200);
            HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/scheduler", "{\"policy\":\"cpu-first\"}");
            htsProblem(r, 405);
        }
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts",
                "management.endpoint.hts.access=unrestricted",
                "management.endpoints.web.path-mapping.hts=scheduler"
            })
    class PathMappedUnrestricted {

        @LocalServerPort
        int port;

        @Test
        void aBadBodyToTheMappedPathIsThe400Problem() throws Exception {
            htsProblem(LocalHttp.postJson(port, "/actuator/scheduler", "[1]"), 400);
        }
    }

    /** spring.mvc.servlet.path: the DispatcherServlet (and Actuator with it) under /api. */
    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {"management.endpoints.web.exposure.include=hts", "spring.mvc.servlet.path=/api"})
    class ServletPathReadOnly {

        @LocalServerPort
        int port;

        @Test
        void aPostUnderTheServletPathIsThe405Problem() throws Exception {
            assertThat(LocalHttp.send(port, "GET", "/api/actuator/hts", null, null)
                            .statusCode())
                    .isEqualTo(200);
            htsProblem(LocalHttp.postJson(port, "/api/actuator/hts", "{\"policy\":\"cpu-first\"}"), 405);
        }
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts",
                "management.endpoints.access.default=unrestricted"
            })
    class DefaultAccessUnrestricted {

        @LocalServerPort
        int port;

        @Autowired
        Scheduler scheduler;

        @Test
        void aPostIsAllowed() throws Exception {
            HttpResponse<String> r = LocalHttp.postJson(port, "/actuator/hts", "{\"policy\":\"cpu-first\"}");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(scheduler.policy().name()).isEqualTo("cpu-first");
        }
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "management.endpoints.web.exposure.include=hts",
                "management.endpoint.hts.access=unrestricted",
                "management.endpoints.access.max-permitted=read-only"
            })
    class CappedToReadOnly {

        @LocalServerPort
        int port;

        @Test
        void aPostIsThe405Problem() throws Exception {
            htsProblem(LocalHttp.postJson(port, "/actuator/hts", "{\"policy\":\"cpu-first\"}"), 405);
            htsProblem(LocalHttp.postJson(port, "/actuator/hts", "[1]"), 405);
        }
    }
}
