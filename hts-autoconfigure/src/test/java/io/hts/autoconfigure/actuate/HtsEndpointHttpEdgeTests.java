package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.autoconfigure.FeaturesApp;
import io.hts.autoconfigure.support.EventStream;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.autoconfigure.support.SlowEventStreamClient;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The endpoints over real HTTP (on 127.0.0.1, a random port) where no other test looks: the live
 * stream drops events for a client that does not read instead of holding up the scheduler or
 * queueing without bound, and holds up no other client meanwhile; a stream ends by itself after
 * {@code hts.events.stream-timeout}; {@code ?format=dot} is the run's graph; the events endpoint's
 * {@code limit} is capped at 10,000 and refuses zero, negatives and words naming what it accepts.
 */
class HtsEndpointHttpEdgeTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static ConfigurableApplicationContext start(String... more) {
        return LocalHttp.server(FeaturesApp.class)
                .properties("management.endpoints.web.exposure.include=htsevents,htsprofiler")
                .properties(more)
                .run();
    }

    // ================================================================== a slow client

    @Test
    void aClientThatDoesNotReadLosesEventsWhileTheSchedulerAndOtherClientsGoOn() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            int port = LocalHttp.port(context);
            assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
                try (SlowEventStreamClient slow =
                        new SlowEventStreamClient(port, "/actuator/htsevents/stream?routine=true")) {
                    StringBuilder first = new StringBuilder();
                    while (!first.toString().contains(":subscribed")) {
                        first.append(slow.chunk());
                    }
                    try (EventStream fast = EventStream.open(port, "/actuator/htsevents/stream?type=run_succeeded")) {
                        fast.awaitSubscribed(); // open once its first comment arrives
                        // Far more events than the subscriber's queue (4,096) and the socket buffers hold:
                        // 3 routine events a task, each a few hundred bytes.
                        TaskGraph wide = TaskGraph.named("wide");
                        wide.group("t", 60_000, (i, t) -> t.cpu(ctx -> i));
                        GraphRun run = scheduler.submit(wide);
                        // The slow client reads nothing meanwhile: the run still ends.
                        assertThat(run.await().status()).isEqualTo(RunStatus.SUCCEEDED);

                        // The other client is not held up by the slow one: it gets this run's end.
                        List<String> read = fast.readThrough(
                                l -> l.startsWith("data:") && l.contains("\"runId\":" + run.runId() + ","));
                        String line = read.get(read.size() - 1);
                        assertThat(JSON.readTree(line.substring("data:".length()))
                                        .get("type")
                                        .asText())
                                .isEqualTo("RUN_SUCCEEDED");
                    }

                    // The slow client now reads: what was buffered, then an event that says how many were lost.
                    Pattern dropped =
                            Pattern.compile(":dropped (\\d+) events \\(the client reads slower than they come\\)");
                    long sent = 0;
                    long lost = -1;
                    while (lost < 0) {
                        String chunk = slow.chunk();
                        assertThat(chunk)
                                .as("the stream goes on until the drop is reported")
                                .isNotNull();
                        sent += chunk.lines().filter(l -> l.startsWith("data:")).count();
                        Matcher m = dropped.matcher(chunk);
                        if (m.find()) {
                            lost = Long.parseLong(m.group(1));
                        }
                    }
                    assertThat(lost)
                            .as("events were dropped for the slow client")
                            .isPositive();
                    assertThat(sent)
                            .as("what reached it before the report is bounded, not every event")
                            .isLessThan(3L * 60_000);
                }
            });
        }
    }

    // ================================================================== hts.events.stream-timeout

    @Test
    void aStreamEndsByItselfAfterTheStreamTimeout() throws Exception {
        try (ConfigurableApplicationContext context = start("hts.events.stream-timeout=1s")) {
            int port = LocalHttp.port(context);
            try (EventStream stream = EventStream.open(port, "/actuator/htsevents/stream")) {
                List<String> lines = assertTimeoutPreemptively(Duration.ofSeconds(60), stream::readToEnd);
                assertThat(lines)
                        .as("the connection ended quietly, after its first comment")
                        .contains(":subscribed")
                        .noneMatch(l -> l.contains("error"));
            }
            // and a new connection is served as before
            assertThat(LocalHttp.get(port, "/actuator/htsevents").statusCode()).isEqualTo(200);
        }
    }

    /**
     * Issue 33 item 7: a first connection is given the newest event's id with its first comment, so
     * that a client whose connection ends before any event reached it (an EventSource resumes with
     * the last id it was given) still gets, on resuming, the events of a run that ran in between.
     */
    @Test
    void aFirstConnectionIsGivenTheNewestEventsIdAndResumesFromIt() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            int port = LocalHttp.port(context);
            scheduler.execute(scheduler.registeredGraphs().get("features"));
            long newest = scheduler.eventLog().orElseThrow().recent(1).get(0).sequence();
            List<String> first;
            try (EventStream stream = EventStream.open(port, "/actuator/htsevents/stream")) {
                first = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> stream.readThrough(String::isEmpty));
            }
            String instance = context.getBean(HtsEventStream.class).instance();
            assertThat(first).containsExactly(EventStream.SUBSCRIBED, "id:" + instance + ":" + newest, "");
            GraphRun away = scheduler.execute(scheduler.registeredGraphs().get("features")); // while disconnected
            try (EventStream resumed =
                    EventStream.open(port, "/actuator/htsevents/stream", "Last-Event-ID", instance + ":" + newest)) {
                List<String> read = assertTimeoutPreemptively(
                        Duration.ofSeconds(30),
                        () -> resumed.readThrough(l -> l.startsWith("data:")
                                && l.contains("\"type\":\"RUN_SUCCEEDED\"")
                                && l.contains("\"runId\":" + away.runId() + ",")));
                assertThat(read)
                        .as("a resumed connection is given no id of its own")
                        .doesNotContain("id:" + instance + ":" + newest)
                        .anyMatch(l -> l.startsWith("data:")
                                && l.contains("\"type\":\"RUN_SUBMITTED\"")
                                && l.contains("\"runId\":" + away.runId() + ","));
            }
        }
    }

    /**
     * Issue 33 (review): an id of another instance (the application behind the address was
     * restarted, and numbers its events from 1 again) resumes from the start of the buffer, not
     * after that number; {@code ?lastEventId=} resumes as the header does (for a client that opens
     * a new connection); a bare number is taken as this instance's.
     */
    @Test
    void anIdOfAnotherInstanceResumesFromTheStartAndTheQueryParameterResumesAsTheHeader() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            int port = LocalHttp.port(context);
            String instance = context.getBean(HtsEventStream.class).instance();
            GraphRun first = scheduler.execute(scheduler.registeredGraphs().get("features"));
            long newest = scheduler.eventLog().orElseThrow().recent(1).get(0).sequence();
            java.util.function.Predicate<String> firstRunSubmitted = l -> l.startsWith("data:")
                    && l.contains("\"type\":\"RUN_SUBMITTED\"")
                    && l.contains("\"runId\":" + first.runId() + ",");
            // far beyond this instance's numbers, but another instance's: the whole buffer comes
            try (EventStream other = EventStream.open(
                    port, "/actuator/htsevents/stream", "Last-Event-ID", "another:" + (newest + 1_000))) {
                List<String> read =
                        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> other.readThrough(firstRunSubmitted));
                assertThat(read).anyMatch(l -> l.equals("id:" + instance + ":1"));
            }
            GraphRun away = scheduler.execute(scheduler.registeredGraphs().get("features"));
            for (String resume : List.of(
                    "/actuator/htsevents/stream?lastEventId=" + instance + ":" + newest,
                    "/actuator/htsevents/stream?lastEventId=" + newest)) {
                try (EventStream resumed = EventStream.open(port, resume)) {
                    List<String> read = assertTimeoutPreemptively(
                            Duration.ofSeconds(30),
                            () -> resumed.readThrough(l -> l.startsWith("data:")
                                    && l.contains("\"type\":\"RUN_SUBMITTED\"")
                                    && l.contains("\"runId\":" + away.runId() + ",")));
                    assertThat(read).as(resume).noneMatch(firstRunSubmitted);
                }
            }
        }
    }

    // ================================================================== ?format=dot

    @Test
    void theProfilersDotFormatIsTheRunsGraphWithItsTasksEdgesAndStates() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            int port = LocalHttp.port(context);
            GraphRun ok = scheduler.execute(scheduler.registeredGraphs().get("features"));
            HttpResponse<String> dot = LocalHttp.get(port, "/actuator/htsprofiler/" + ok.runId() + "?format=dot");
            assertThat(dot.statusCode()).isEqualTo(200);
            assertThat(dot.headers().firstValue("Content-Type").orElse("")).startsWith("text/vnd.graphviz");
            String text = dot.body();
            assertThat(text).startsWith("digraph \"features\" {").endsWith("}\n");
            assertThat(text)
                    .containsPattern("t0 \\[label=\"load\\\\ncpu [0-9.]+ ms\", fillcolor=\"palegreen\"\\]")
                    .containsPattern("t1 \\[label=\"double\\\\ncpu [0-9.]+ ms\", fillcolor=\"palegreen\"\\]")
                    .contains("t0 -> t1;");
            assertThat(text)
                    .isEqualTo(
                            scheduler.profiler().run(ok.runId()).orElseThrow().toDot());

            TaskGraph failing = TaskGraph.named("fails");
            var bad = failing.task("bad").cpu(ctx -> {
                throw new IllegalStateException("no");
            });
            failing.task("after \"quoted\"").after(bad).cpu(ctx -> 1);
            GraphRun failed = scheduler.submit(failing);
            assertThat(failed.future()).failsWithin(Duration.ofSeconds(10));
            String failedDot = LocalHttp.get(port, "/actuator/htsprofiler/" + failed.runId() + "?format=dot")
                    .body();
            assertThat(failedDot)
                    .contains("t0 [label=\"bad\\ncpu")
                    .contains("fillcolor=\"salmon\"")
                    .contains("t1 [label=\"after \\\"quoted\\\"\", fillcolor=\"lightgrey\"]")
                    .contains("t0 -> t1;");

            HttpResponse<String> unknown = LocalHttp.get(port, "/actuator/htsprofiler/987654?format=dot");
            assertThat(unknown.statusCode()).isEqualTo(404);
            assertThat(unknown.body()).contains("run 987654 is not among the runs the profiler keeps");
        }
    }

    // ================================================================== the events endpoint's limit

    private static void outOfRange(int port, String limit, String detail) throws Exception {
        HttpResponse<String> response = LocalHttp.get(port, "/actuator/htsevents?limit=" + limit);
        assertThat(response.statusCode()).as("limit=%s", limit).isEqualTo(400);
        JsonNode body = JSON.readTree(response.body());
        assertThat(body.get("status").asInt()).isEqualTo(400);
        assertThat(body.get("parameter").asText()).isEqualTo("limit");
        assertThat(body.get("value").asText()).isEqualTo(limit);
        assertThat(body.get("detail").asText()).isEqualTo(detail);
        assertThat(body.get("accepted").asText()).isEqualTo("a whole number from 1 to 10000");
    }

    @Test
    void theEventsLimitIsCappedAtTenThousandAndRefusesZeroNegativesAndWords() throws Exception {
        try (ConfigurableApplicationContext context = start("hts.events.buffer-size=20000")) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            int port = LocalHttp.port(context);
            // More notable events than the cap: a failed task is one event, and its run another.
            TaskGraph many = TaskGraph.named("many-failures");
            many.group(
                    "f",
                    10_500,
                    (i, t) -> t.cpu(ctx -> {
                        throw new IllegalStateException("f" + i);
                    }));
            GraphRun run = scheduler.submit(
                    many, io.hts.engine.run.RunOptions.failureMode(io.hts.engine.run.FailureMode.CONTINUE));
            assertThat(run.future()).failsWithin(Duration.ofSeconds(60));
            int buffered = scheduler
                    .eventLog()
                    .orElseThrow()
                    .events(-1, Integer.MAX_VALUE, e -> true)
                    .size();
            assertThat(buffered).isGreaterThan(10_000);

            JsonNode capped = JSON.readTree(
                    LocalHttp.get(port, "/actuator/htsevents?limit=10000").body());
            assertThat(capped.get("events")).hasSize(10_000);
            JsonNode byDefault =
                    JSON.readTree(LocalHttp.get(port, "/actuator/htsevents").body());
            assertThat(byDefault.get("events")).as("the default limit").hasSize(200);
            JsonNode one = JSON.readTree(
                    LocalHttp.get(port, "/actuator/htsevents?limit=1").body());
            assertThat(one.get("events")).hasSize(1);

            outOfRange(port, "10001", "10001 is out of range");
            outOfRange(port, "2147483648", "2147483648 is out of range");
            outOfRange(port, "0", "0 is out of range");
            outOfRange(port, "-1", "-1 is out of range");
            outOfRange(port, "1e3", "'1e3' is not a whole number");
            outOfRange(port, "12.5", "'12.5' is not a whole number");
        }
    }
}
