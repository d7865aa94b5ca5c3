package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.autoconfigure.FeaturesApp;
import io.hts.autoconfigure.support.EventStream;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The acceptance test: an application with only the auto-configuration, a graph bean and
 * {@code hts.scheduler.policy=round-robin}, runs the graph and shows it under {@code /actuator/hts},
 * over real HTTP.
 */
class HtsEndpointHttpTests {

    /** The body of a GET whatever its status: an error answer must say what was wrong and what is accepted. */
    static String errorBody(int port, String path, int expectedStatus) throws Exception {
        HttpResponse<String> response = LocalHttp.get(port, path);
        assertThat(response.statusCode()).as("status of %s", path).isEqualTo(expectedStatus);
        return response.body();
    }

    static String contentType(int port, String path) throws Exception {
        HttpResponse<String> response = LocalHttp.get(port, path);
        assertThat(response.statusCode()).isEqualTo(200);
        return response.headers().firstValue("Content-Type").orElse("");
    }

    static JsonNode get(int port, String path, int[] status) throws Exception {
        HttpResponse<String> response = LocalHttp.get(port, path);
        status[0] = response.statusCode();
        return response.statusCode() == 200 ? JsonMapper.builder().build().readTree(response.body()) : null;
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "hts.scheduler.policy=round-robin",
                "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,health",
                "management.endpoint.health.show-components=always",
                "management.endpoint.health.show-details=always"
            })
    class Exposed {

        @LocalServerPort
        int port;

        @Autowired
        Scheduler scheduler;

        @Test
        void theGraphBeanRunsAndShowsUnderActuatorHts() throws Exception {
            TaskGraph graph = scheduler.registeredGraphs().get("features");
            assertThat(scheduler.execute(graph).states().values())
                    .allMatch(s -> s.name().equals("SUCCEEDED"));
            int[] status = new int[1];
            JsonNode hts = get(port, "/actuator/hts", status);
            assertThat(status[0]).isEqualTo(200);
            assertThat(hts.get("policy").asText()).isEqualTo("round-robin");
            assertThat(hts.get("graphs").get("features").get("tasks").asInt()).isEqualTo(2);
            assertThat(hts.get("pool").get("workers").asInt())
                    .isEqualTo(Runtime.getRuntime().availableProcessors());
            assertThat(hts.get("pool").get("executed").asLong()).isGreaterThanOrEqualTo(2);
            assertThat(hts.get("devices").get(0).get("device").asText()).isEqualTo("cpu");
            assertThat(hts.get("activeRuns").isArray()).isTrue();
        }

        @Test
        void recentEventsComeWithACursorAndFilters() throws Exception {
            long runId = scheduler
                    .execute(scheduler.registeredGraphs().get("features"))
                    .runId();
            int[] status = new int[1];
            JsonNode all = get(port, "/actuator/htsevents", status);
            assertThat(status[0]).isEqualTo(200);
            assertThat(all.get("capacity").asInt()).isEqualTo(10_000);
            assertThat(all.get("events").isArray()).isTrue();
            JsonNode finished = get(port, "/actuator/htsevents?runId=" + runId + "&type=run_succeeded", status);
            assertThat(finished.get("events")).hasSize(1);
            assertThat(finished.get("events").get(0).has("worker"))
                    .as("no -1 sentinel for a run's event")
                    .isFalse();
            assertThat(finished.get("events").get(0).get("graph").asText()).isEqualTo("features");
            long next = get(port, "/actuator/htsevents?limit=10000", status)
                    .get("next")
                    .asLong();
            JsonNode none = get(port, "/actuator/htsevents?after=" + next, status);
            assertThat(none.get("events")).isEmpty();
            assertThat(none.get("next").asLong()).isEqualTo(next);
            JsonNode problem =
                    JsonMapper.builder().build().readTree(errorBody(port, "/actuator/htsevents?type=exploded", 400));
            assertThat(problem.get("status").asInt()).isEqualTo(400);
            assertThat(problem.get("parameter").asText()).isEqualTo("type");
            assertThat(problem.get("value").asText()).isEqualTo("exploded");
            assertThat(problem.get("detail").asText()).isEqualTo("unknown event type 'exploded'");
            assertThat(problem.get("accepted").asText()).contains("task_failed", "run_succeeded", "case-insensitive");
        }

        /** SSE: a client subscribed before a run starts receives that run's events as they happen. */
        @Test
        void theLiveStreamDeliversTheEventsOfARunStartedWhileSubscribed() throws Exception {
            try (EventStream stream = EventStream.open(port, "/actuator/htsevents/stream?task=double&routine=true")) {
                assertThat(stream.contentType()).startsWith("text/event-stream");
                List<String> seen = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                    stream.awaitSubscribed(); // the stream is open once its first comment arrives
                    long runId = scheduler
                            .submit(scheduler.registeredGraphs().get("features"))
                            .runId();
                    List<String> read = stream.readThrough(l -> l.startsWith("data:") && l.contains("TASK_SUCCEEDED"));
                    String line = read.get(read.size() - 1);
                    JsonNode event = JsonMapper.builder().build().readTree(line.substring("data:".length()));
                    assertThat(event.get("runId").asLong()).isEqualTo(runId);
                    assertThat(event.get("task").asText()).isEqualTo("double");
                    return read;
                });
                assertThat(seen)
                        .contains("event:TASK_SUCCEEDED")
                        .anyMatch(l -> l.startsWith("id:"))
                        .noneMatch(l -> l.contains("\"task\":\"load\""));
            }
            int[] status = new int[1];
            assertThat(errorBody(port, "/actuator/htsevents/stream?type=exploded", 400))
                    .as("an unknown type")
                    .contains("unknown event type 'exploded'", "task_failed");
        }

        @Test
        void theProfilerShowsRunsStatisticsAndOneRunsTrace() throws Exception {
            long runId = scheduler
                    .execute(scheduler.registeredGraphs().get("features"))
                    .runId();
            int[] status = new int[1];
            JsonNode summary = get(port, "/actuator/htsprofiler", status);
            assertThat(status[0]).isEqualTo(200);
            assertThat(summary.get("recentRuns"))
                    .anySatisfy(r -> assertThat(r.get("runId").asLong()).isEqualTo(runId));
            assertThat(summary.get("recentRuns"))
                    .allSatisfy(r -> assertThat(
                                    java.time.Instant.parse(r.get("finished").asText()))
                            .isAfterOrEqualTo(
                                    java.time.Instant.parse(r.get("submitted").asText())));
            assertThat(summary.get("statistics")
                            .get("features")
                            .get("double")
                            .get("count")
                            .asLong())
                    .isPositive();
            JsonNode run = get(port, "/actuator/htsprofiler/" + runId, status);
            assertThat(run.get("graph").asText()).isEqualTo("features");
            assertThat(run.get("criticalPath")).extracting(JsonNode::asText).containsExactly("load", "double");
            JsonNode trace = get(port, "/actuator/htsprofiler/" + runId + "?format=trace", status);
            assertThat(status[0]).isEqualTo(200);
            assertThat(contentType(port, "/actuator/htsprofiler/" + runId + "?format=trace"))
                    .startsWith("application/json");
            assertThat(contentType(port, "/actuator/htsprofiler/" + runId + "?format=dot"))
                    .startsWith("text/vnd.graphviz");
            assertThat(trace.get("traceEvents").isArray()).isTrue();
            assertThat(errorBody(port, "/actuator/htsprofiler/999999", 404))
                    .as("a run not retained")
                    .contains("run 999999 is not among the runs the profiler keeps");
            assertThat(errorBody(port, "/actuator/htsprofiler/" + runId + "?format=pdf", 400))
                    .contains("\"parameter\":\"format\"", "\"value\":\"pdf\"", "trace (Chrome Trace Event JSON)");
        }

        /** Issue 15 item 2: a failed run's profile lists every task, with its state and cause, in pages. */
        @Test
        void aFailedRunsProfileListsEveryTaskWithItsStateAndCause() throws Exception {
            io.hts.engine.graph.TaskGraph g = io.hts.engine.graph.TaskGraph.named("four");
            var prepare = g.task("prepare").cpu(ctx -> 1);
            var boom = g.task("boom").after(prepare).cpu(ctx -> {
                throw new IllegalStateException("bad input in row 7");
            });
            var child = g.task("child").after(boom).cpu(ctx -> 2);
            g.task("grandchild").after(child).cpu(ctx -> 3);
            io.hts.engine.run.GraphRun failed = scheduler.submit(g);
            org.assertj.core.api.Assertions.assertThatThrownBy(failed::await)
                    .isInstanceOf(io.hts.engine.run.GraphRunException.class);
            int[] status = new int[1];
            JsonNode run = get(port, "/actuator/htsprofiler/" + failed.runId(), status);
            assertThat(status[0]).isEqualTo(200);
            assertThat(run.get("status").asText()).isEqualTo("FAILED");
            assertThat(run.get("taskStates").get("SUCCEEDED").asInt()).isEqualTo(1);
            assertThat(run.get("taskStates").get("FAILED").asInt()).isEqualTo(1);
            assertThat(run.get("taskStates").get("CANCELLED").asInt()).isEqualTo(2);
            JsonNode list = run.get("taskList");
            assertThat(list.get("total").asInt()).isEqualTo(4);
            java.util.Map<String, JsonNode> byName = new java.util.HashMap<>();
            list.get("tasks").forEach(t -> byName.put(t.get("task").asText(), t));
            assertThat(byName).containsOnlyKeys("prepare", "boom", "child", "grandchild");
            assertThat(byName.get("boom").get("state").asText()).isEqualTo("FAILED");
            assertThat(byName.get("boom").get("cause").asText())
                    .isEqualTo("java.lang.IllegalStateException: bad input in row 7");
            assertThat(byName.get("grandchild").get("state").asText()).isEqualTo("CANCELLED");
            assertThat(byName.get("grandchild").get("cause").asText()).contains("boom");
            assertThat(byName.get("grandchild").has("durationMillis")).isFalse();
            assertThat(byName.get("prepare").has("cause")).isFalse();
            JsonNode page = get(port, "/actuator/htsprofiler/" + failed.runId() + "?offset=3&limit=2", status);
            assertThat(page.get("taskList").get("tasks")).hasSize(1);
            assertThat(errorBody(port, "/actuator/htsprofiler/" + failed.runId() + "?limit=0", 400))
                    .as("a limit below 1")
                    .contains("\"parameter\":\"limit\"", "a whole number from 1 to 10000");
        }

        @Test
        void theHtsHealthContributorIsUpWithItsDevices() throws Exception {
            int[] status = new int[1];
            JsonNode health = get(port, "/actuator/health", status);
            assertThat(status[0]).isEqualTo(200);
            JsonNode hts = health.get("components").get("hts");
            assertThat(hts.get("status").asText()).isEqualTo("UP");
            assertThat(hts.get("details").get("workers").asInt())
                    .isEqualTo(Runtime.getRuntime().availableProcessors());
            assertThat(hts.get("details").get("cpu").asText()).isEqualTo("UP");
        }
    }

    static int post(int port, String path, String json) throws Exception {
        return LocalHttp.postJson(port, path, json).statusCode();
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = "management.endpoints.web.exposure.include=hts")
    class ReadOnly {

        @LocalServerPort
        int port;

        @Autowired
        Scheduler scheduler;

        @Test
        void switchingThePolicyIsRefusedWhileTheEndpointIsReadOnly() throws Exception {
            HttpResponse<String> refused = LocalHttp.postJson(port, "/actuator/hts", "{\"policy\":\"gpu-first\"}");
            assertThat(refused.statusCode()).isEqualTo(405);
            assertThat(refused.body())
                    .as("says what enables it")
                    .contains("read-only", "management.endpoint.hts.access", "unrestricted");
            assertThat(scheduler.policy().name()).isEqualTo("default");
            assertThat(get(port, "/actuator/hts", new int[1]).get("policy").asText())
                    .as("reads still work")
                    .isEqualTo("default");
        }
    }

    @Nested
    @SpringBootTest(
            classes = FeaturesApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {"management.endpoints.web.exposure.include=hts", "management.endpoint.hts.access=unrestricted"
            })
    class Unrestricted {

        @LocalServerPort
        int port;

        @Autowired
        Scheduler scheduler;

        @Test
        void thePolicyCanBeSwitchedAndAnUnknownOneIsABadRequest() throws Exception {
            assertThat(post(port, "/actuator/hts", "{\"policy\":\"shortest-job-first\"}"))
                    .isEqualTo(200);
            assertThat(scheduler.policy().name()).isEqualTo("shortest-job-first");
            HttpResponse<String> refused = LocalHttp.postJson(port, "/actuator/hts", "{\"policy\":\"fastest\"}");
            assertThat(refused.statusCode()).isEqualTo(400);
            assertThat(refused.body())
                    .contains("unknown scheduling policy 'fastest'", "round-robin", "shortest-job-first");
        }

        /** Bodies that are not a JSON object, each with the start of the detail its 400 gives. */
        static Stream<Arguments> notJsonObjects() {
            return Stream.of(
                    Arguments.of("policy=round-robin", "the body is not JSON"),
                    Arguments.of("{\"policy\": \"round-robin\"", "the body is not JSON"),
                    Arguments.of("[\"round-robin\"]", "the body is JSON but not an object: array"),
                    Arguments.of("\"round-robin\"", "the body is JSON but not an object: string"),
                    Arguments.of("{\"policy\":\"" + "x".repeat(70 * 1024) + "\"}", "the body is larger than 64 KiB"));
        }

        @ParameterizedTest(name = "[{index}] {1}")
        @MethodSource("notJsonObjects")
        void aBodyThatIsNotAJsonObjectIsABadRequestSayingWhatIsAccepted(String body, String detail) throws Exception {
            String before = scheduler.policy().name();
            HttpResponse<String> refused = LocalHttp.postJson(port, "/actuator/hts", body);
            assertThat(refused.statusCode())
                    .as("POST of %s", body.length() > 40 ? body.substring(0, 40) : body)
                    .isEqualTo(400);
            assertThat(refused.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
            JsonNode problem = JsonMapper.builder().build().readTree(refused.body());
            assertThat(problem.get("status").asInt()).isEqualTo(400);
            assertThat(problem.get("detail").asText()).startsWith(detail);
            assertThat(problem.get("accepted").asText())
                    .contains("{\"policy\": \"round-robin\"}", "{\"cancelRun\": 42}");
            assertThat(scheduler.policy().name()).as("nothing changed").isEqualTo(before);
            assertThat(post(port, "/actuator/hts", "{\"policy\":\"cpu-first\"}"))
                    .as("a JSON object still passes")
                    .isEqualTo(200);
            assertThat(scheduler.policy().name()).isEqualTo("cpu-first");
        }

        @Test
        void anActiveRunCanBeCancelled() throws Exception {
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            TaskGraph g = TaskGraph.named("long");
            g.task("spin").cpu(ctx -> {
                started.countDown();
                while (true) {
                    ctx.checkCancelled();
                    Thread.onSpinWait();
                }
            });
            io.hts.engine.run.GraphRun run = scheduler.submit(g);
            assertThat(started.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(post(port, "/actuator/hts", "{\"cancelRun\":" + run.runId() + "}"))
                    .isEqualTo(200);
            org.awaitility.Awaitility.await().until(run::isDone);
            assertThat(run.status().name()).isEqualTo("CANCELLED");
        }
    }

    @Nested
    @SpringBootTest(classes = FeaturesApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
    class NotExposed {

        @LocalServerPort
        int port;

        @Test
        void theEndpointIsAbsentUnlessExposed() throws Exception {
            int[] status = new int[1];
            get(port, "/actuator/hts", status);
            assertThat(status[0]).isEqualTo(404);
            get(port, "/actuator/htsevents/stream", status);
            assertThat(status[0]).as("the live stream too").isEqualTo(404);
        }
    }
}
