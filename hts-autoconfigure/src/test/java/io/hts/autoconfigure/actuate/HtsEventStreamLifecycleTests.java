package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.autoconfigure.FeaturesApp;
import io.hts.autoconfigure.support.EventStream;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Issue 15 item 13: a client that resumes with Last-Event-ID gets what it missed, and an open
 * stream does not hold up a graceful shutdown for its whole grace period.
 */
class HtsEventStreamLifecycleTests {

    private static ConfigurableApplicationContext start() {
        return LocalHttp.server(FeaturesApp.class)
                .properties(
                        "server.shutdown=graceful",
                        "spring.lifecycle.timeout-per-shutdown-phase=60s",
                        "management.endpoints.web.exposure.include=htsevents")
                .run();
    }

    @Test
    void aResumingClientGetsTheEventsItMissedOnceAndInOrder() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            long before = scheduler.eventLog().orElseThrow().events(-1, Integer.MAX_VALUE, e -> true).stream()
                    .mapToLong(e -> e.sequence())
                    .max()
                    .orElse(0);
            GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("features")); // missed while away
            try (EventStream stream = EventStream.open(
                    LocalHttp.port(context),
                    "/actuator/htsevents/stream?runId=" + run.runId(),
                    "Last-Event-ID",
                    Long.toString(before))) {
                List<String> seen = assertTimeoutPreemptively(
                        Duration.ofSeconds(30), () -> stream.readThrough(l -> l.equals("event:RUN_SUCCEEDED")));
                assertThat(seen).contains(":subscribed", "event:RUN_SUBMITTED");
                assertThat(seen.indexOf("event:RUN_SUBMITTED")).isLessThan(seen.indexOf("event:RUN_SUCCEEDED"));
                assertThat(seen.stream().filter(l -> l.equals("event:RUN_SUBMITTED")))
                        .hasSize(1);
            }
        }
    }

    @Test
    void anOpenStreamIsCompletedWhenTheApplicationStopsInsteadOfHoldingUpTheGracePeriod() throws Exception {
        ConfigurableApplicationContext context = start();
        EventStream stream = EventStream.open(LocalHttp.port(context), "/actuator/htsevents/stream");
        assertTimeoutPreemptively(Duration.ofSeconds(20), stream::awaitSubscribed); // open once it arrived
        CompletableFuture<Void> closed = CompletableFuture.runAsync(context::close);
        // the grace period is 60 s: a stream left open would hold the close (and this stream) that long
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            stream.readToEnd();
            closed.get();
        });
        assertThat(context.isActive()).isFalse();
    }
    /**
     * A stream stopped and started again (a context paused and resumed, as Spring's test context
     * cache does with a context not in use, or a checkpoint and restore) streams as before: its
     * stop ended its streams but shut down its senders, so that every later stream sent nothing
     * (found by the dashboard's browser tests of issue 33).
     */
    @Test
    void aStreamStoppedAndStartedAgainStreamsAsBefore() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            HtsEventStream events = context.getBean(HtsEventStream.class);
            events.stop();
            events.start();
            Scheduler scheduler = context.getBean(Scheduler.class);
            try (EventStream stream = EventStream.open(LocalHttp.port(context), "/actuator/htsevents/stream")) {
                assertTimeoutPreemptively(Duration.ofSeconds(20), stream::awaitSubscribed);
                GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("features"));
                List<String> seen = assertTimeoutPreemptively(
                        Duration.ofSeconds(30),
                        () -> stream.readThrough(l -> l.startsWith("data:")
                                && l.contains("\"type\":\"RUN_SUCCEEDED\"")
                                && l.contains("\"runId\":" + run.runId() + ",")));
                assertThat(seen).contains("event:RUN_SUBMITTED");
            }
        }
    }
}
