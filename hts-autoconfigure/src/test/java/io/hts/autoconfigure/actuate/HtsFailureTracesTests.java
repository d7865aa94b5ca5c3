package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.run.Scheduler;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/** The failed tasks' stack traces the profiler endpoint serves: what is kept, and within which bounds. */
class HtsFailureTracesTests {

    private static TaskEvent event(EventType type, long runId, String task, Throwable error) {
        return new TaskEvent(1, 0, Instant.now(), type, runId, "g", task, 0, null, -1, 1, error, null, null);
    }

    @Test
    void onlyFailuresAreKeptAndOnlyTheirRunsFirstOnes() {
        HtsFailureTraces traces = new HtsFailureTraces();
        assertThat(traces.wantsRoutineEvents()).isFalse();
        traces.onEvent(event(EventType.TASK_RETRYING, 1, "retried", new IllegalStateException("first try")));
        traces.onEvent(new TaskEvent(
                2,
                0,
                Instant.now(),
                EventType.RUN_FAILED,
                1,
                "g",
                null,
                -1,
                null,
                -1,
                0,
                new IllegalStateException("run"),
                null,
                null));
        assertThat(traces.trace(1, "retried")).isEmpty();
        for (int i = 0; i < HtsFailureTraces.PER_RUN + 3; i++) {
            traces.onEvent(event(EventType.TASK_FAILED, 1, "t" + i, new IllegalStateException("no " + i)));
        }
        assertThat(traces.trace(1, "t0")).get().asString().startsWith("java.lang.IllegalStateException: no 0");
        assertThat(traces.trace(1, "t" + (HtsFailureTraces.PER_RUN - 1))).isPresent();
        assertThat(traces.trace(1, "t" + HtsFailureTraces.PER_RUN)).isEmpty();
        for (long run = 2; run <= HtsFailureTraces.RUNS + 1; run++) {
            traces.onEvent(event(EventType.TASK_FAILED, run, "t", new IllegalStateException("run " + run)));
        }
        assertThat(traces.trace(1, "t0"))
                .as("the oldest run's traces went first")
                .isEmpty();
        assertThat(traces.trace(2, "t")).isPresent();
        assertThat(traces.trace(HtsFailureTraces.RUNS + 1, "t")).isPresent();
    }

    @Test
    void aLongTraceIsCutAndAThrowableThatCannotBePrintedStillGivesALine() {
        String longMessage = "x".repeat(HtsFailureTraces.MAX_CHARS * 2);
        String cut = HtsFailureTraces.text(new IllegalStateException(longMessage));
        assertThat(cut).hasSizeLessThan(HtsFailureTraces.MAX_CHARS + 100).contains("more characters)");
        Throwable hostile = new RuntimeException() {
            private static final long serialVersionUID = 1L;

            @Override
            public String toString() {
                throw new IllegalStateException("toString refuses");
            }
        };
        assertThat(HtsFailureTraces.text(hostile)).contains("printing the stack trace of a", "threw");
    }

    @Test
    void startingARunOnAShutDownSchedulerIsA503() {
        TaskGraph graph = TaskGraph.named("late");
        graph.task("only").cpu(ctx -> 1);
        Scheduler scheduler = Scheduler.create();
        scheduler.register(graph);
        scheduler.close();
        Object answer = new HtsEndpoint(scheduler).change(null, null, "late");
        assertThat(answer).isInstanceOf(WebEndpointResponse.class);
        WebEndpointResponse<?> response = (WebEndpointResponse<?>) answer;
        assertThat(response.getStatus()).isEqualTo(503);
        assertThat(((Map<?, ?>) response.getBody()).get("detail").toString()).contains("shut down", "late");
        assertThat(new HtsEndpoint(scheduler).state()).doesNotContainKey("access");
    }
}
