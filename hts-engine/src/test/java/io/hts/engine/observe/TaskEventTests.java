package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Device;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** An event reads as one log line: its sequence, type, run and graph, then only what it has. */
class TaskEventTests {

    @Test
    void aTaskEventNamesTheTaskDeviceAttemptErrorAndDetail() {
        TaskEvent retrying = new TaskEvent(
                7,
                0,
                Instant.EPOCH,
                EventType.TASK_RETRYING,
                3,
                "etl",
                "load",
                0,
                Device.GPU,
                1,
                1,
                new IllegalStateException("out of memory"),
                null,
                "retry in 5 ms");
        assertThat(retrying)
                .hasToString("#7 TASK_RETRYING run=3 graph=etl task=load device=gpu attempt=1"
                        + " error=java.lang.IllegalStateException: out of memory (retry in 5 ms)");
    }

    @Test
    void aRunEventHasNeitherTaskNorDeviceNorAttempt() {
        TaskEvent submitted = new TaskEvent(
                8, 0, Instant.EPOCH, EventType.RUN_SUBMITTED, 3, "etl", null, -1, null, -1, 0, null, null, null);
        assertThat(submitted).hasToString("#8 RUN_SUBMITTED run=3 graph=etl");
    }
}
