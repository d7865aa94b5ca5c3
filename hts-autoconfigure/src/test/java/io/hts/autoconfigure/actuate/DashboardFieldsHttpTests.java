package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.autoconfigure.support.DashboardApp;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/**
 * What the dashboard reads beyond the endpoints' first version, over real HTTP: whether writes are
 * allowed and the policies, an active run's progress, a run's profile while it goes on, each task's
 * dependencies, a failed task's stack trace, and starting a run of a registered graph.
 */
class DashboardFieldsHttpTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    static JsonNode task(JsonNode profile, String name) {
        for (JsonNode t : profile.get("taskList").get("tasks")) {
            if (t.get("task").asText().equals(name)) {
                return t;
            }
        }
        throw new AssertionError("no task " + name + " in " + profile);
    }

    static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Nested
    @SpringBootTest(
            classes = DashboardApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler"
            })
    class ReadOnly {

        @LocalServerPort
        int port;

        @Autowired
        Scheduler scheduler;

        @Autowired
        DashboardApp.Gate gate;

        @Test
        void theStateSaysReadOnlyAndNamesThePolicies() throws Exception {
            JsonNode hts = LocalHttp.json(LocalHttp.get(port, "/actuator/hts"));
            assertThat(hts.get("access").asText()).isEqualTo("read-only");
            assertThat(texts(hts.get("policies")))
                    .containsExactly("default", "gpu-first", "cpu-first", "round-robin", "shortest-job-first");
            HttpResponse<String> post = LocalHttp.postJson(port, "/actuator/hts", "{\"run\": \"quick\"}");
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(post.body()).contains("starting runs", "management.endpoint.hts.access");
        }

        @Test
        void anActiveRunShowsItsProgressAndItsProfileSoFar() throws Exception {
            gate.close();
            GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("gated"));
            try {
                await().atMost(WAIT).untilAsserted(() -> {
                    JsonNode active = activeRun(run.runId());
                    assertThat(active.get("tasks").asInt()).isEqualTo(7);
                    JsonNode states = active.get("taskStates");
                    assertThat(states.get("SUCCEEDED").asInt()).isEqualTo(5); // load and the shards
                    assertThat(states.get("RUNNING").asInt()).isEqualTo(1); // hold
                    assertThat(states.get("CREATED").asInt()).isEqualTo(1); // merge
                    assertThat(active.get("pendingTasks").asInt()).isBetween(2, 7); // lags by a worker's batch
                });
                assertThat(Instant.parse(activeRun(run.runId()).get("submitted").asText()))
                        .isEqualTo(run.submitted());
                JsonNode profile = LocalHttp.json(LocalHttp.get(port, "/actuator/htsprofiler/" + run.runId()));
                assertThat(profile.get("status").asText()).isEqualTo("RUNNING");
                assertThat(profile.has("finished")).isFalse();
                assertThat(task(profile, "hold").get("state").asText()).isEqualTo("RUNNING");
                // issue 33 item 8: the running task counts with its time so far; it has no duration yet
                assertThat(task(profile, "hold").has("startMillis")).isTrue();
                assertThat(task(profile, "hold").has("durationMillis")).isFalse();
                assertThat(texts(profile.get("criticalPath"))).endsWith("hold");
                assertThat(profile.get("criticalPathMillis").asDouble())
                        .isGreaterThanOrEqualTo(profile.get("makespanMillis").asDouble()
                                - task(profile, "hold").get("startMillis").asDouble()
                                - 0.001); // the doubles' rounding
                assertThat(activeRun(run.runId()).get("elapsedMillis").asDouble())
                        .isPositive();
                assertThat(texts(task(profile, "hold").get("after")))
                        .containsExactly("shard[0]", "shard[1]", "shard[2]", "shard[3]");
                assertThat(texts(task(profile, "shard[2]").get("after"))).containsExactly("load");
                assertThat(task(profile, "load").get("after")).isEmpty();
                assertThat(LocalHttp.get(port, "/actuator/htsprofiler/" + run.runId() + "?format=dot")
                                .body())
                        .contains("hold");
            } finally {
                gate.open();
            }
            run.await();
            await().atMost(WAIT)
                    .until(() -> scheduler.profiler().run(run.runId()).isPresent());
            JsonNode done = LocalHttp.json(LocalHttp.get(port, "/actuator/htsprofiler/" + run.runId()));
            assertThat(done.get("status").asText()).isEqualTo("SUCCEEDED");
            assertThat(done.has("finished")).isTrue();
        }

        private JsonNode activeRun(long runId) throws Exception {
            for (JsonNode r :
                    LocalHttp.json(LocalHttp.get(port, "/actuator/hts")).get("activeRuns")) {
                if (r.get("runId").asLong() == runId) {
                    return r;
                }
            }
            throw new AssertionError("run " + runId + " is not active");
        }

        @Test
        void aFailedTaskHasItsStackTraceAndItsDescendantOnlyItsCause() throws Exception {
            GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("failing"));
            await().atMost(WAIT)
                    .until(() -> scheduler.profiler().run(run.runId()).isPresent());
            JsonNode profile = LocalHttp.json(LocalHttp.get(port, "/actuator/htsprofiler/" + run.runId()));
            JsonNode boom = task(profile, "boom");
            assertThat(boom.get("state").asText()).isEqualTo("FAILED");
            assertThat(boom.get("cause").asText()).contains(DashboardApp.BOOM);
            assertThat(boom.get("stackTrace").asText())
                    .startsWith("java.lang.IllegalStateException: " + DashboardApp.BOOM)
                    .contains("\tat io.hts.autoconfigure.support.DashboardApp")
                    .contains("Caused by: java.io.IOException: short read at row 7");
            JsonNode child = task(profile, "child");
            assertThat(child.get("state").asText()).isEqualTo("CANCELLED");
            assertThat(child.has("stackTrace")).isFalse();
            assertThat(texts(child.get("after"))).containsExactly("boom");
            assertThat(task(profile, "prepare").has("stackTrace")).isFalse();
        }

        /** Issue 33 item 9: the failed task is in the statistics, counted as failed; its descendant never ran. */
        @Test
        void theStatisticsCountAFailedTaskAsFailed() throws Exception {
            GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("failing"));
            await().atMost(WAIT)
                    .until(() -> scheduler.profiler().run(run.runId()).isPresent());
            JsonNode failing = LocalHttp.json(LocalHttp.get(port, "/actuator/htsprofiler"))
                    .get("statistics")
                    .get("failing");
            assertThat(failing.has("child")).as("cancelled before it started").isFalse();
            JsonNode boom = failing.get("boom");
            assertThat(boom.get("count").asLong()).isPositive();
            assertThat(boom.get("failed").asLong()).isEqualTo(boom.get("count").asLong());
            assertThat(boom.get("cancelled").asLong()).isZero();
            assertThat(failing.get("prepare").get("failed").asLong()).isZero();
        }
    }

    @Nested
    @SpringBootTest(
            classes = DashboardApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=hts,htsprofiler",
                "management.endpoint.hts.access=unrestricted"
            })
    class Writable {

        @LocalServerPort
        int port;

        @Autowired
        Scheduler scheduler;

        @Test
        void aPostStartsARunOfARegisteredGraph() throws Exception {
            assertThat(LocalHttp.json(LocalHttp.get(port, "/actuator/hts"))
                            .get("access")
                            .asText())
                    .isEqualTo("unrestricted");
            HttpResponse<String> post = LocalHttp.postJson(port, "/actuator/hts", "{\"run\": \"quick\"}");
            assertThat(post.statusCode()).as(post.body()).isEqualTo(200);
            JsonNode submitted = LocalHttp.json(post).get("submitted");
            assertThat(submitted.get("graph").asText()).isEqualTo("quick");
            long runId = submitted.get("runId").asLong();
            await().atMost(WAIT).until(() -> scheduler.profiler().run(runId).isPresent());
            assertThat(LocalHttp.json(LocalHttp.get(port, "/actuator/htsprofiler/" + runId))
                            .get("status")
                            .asText())
                    .isEqualTo("SUCCEEDED");
        }

        @Test
        void anUnknownGraphIsA400NamingTheRegisteredOnesAndNothingIsDone() throws Exception {
            String before = scheduler.policy().name();
            HttpResponse<String> post =
                    LocalHttp.postJson(port, "/actuator/hts", "{\"run\": \"nothing\", \"policy\": \"round-robin\"}");
            assertThat(post.statusCode()).isEqualTo(400);
            JsonNode problem = LocalHttp.json(post);
            assertThat(problem.get("parameter").asText()).isEqualTo("run");
            assertThat(problem.get("value").asText()).isEqualTo("nothing");
            assertThat(problem.get("detail").asText()).contains("no registered graph 'nothing'");
            assertThat(problem.get("accepted").asText()).contains("gated", "failing", "quick");
            assertThat(scheduler.policy().name()).isEqualTo(before);
            HttpResponse<String> notActive =
                    LocalHttp.postJson(port, "/actuator/hts", "{\"run\": \"quick\", \"cancelRun\": 987654}");
            assertThat(notActive.statusCode()).isEqualTo(404);
            HttpResponse<String> array = LocalHttp.postJson(port, "/actuator/hts", "{\"run\": [\"quick\"]}");
            assertThat(array.statusCode()).isEqualTo(400);
            assertThat(LocalHttp.json(array).get("accepted").asText()).contains("{\"run\": \"features\"}");
        }
    }
}
