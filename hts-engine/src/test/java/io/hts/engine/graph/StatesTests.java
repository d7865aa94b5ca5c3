package io.hts.engine.graph;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Which run and task states are final, and how devices are named in configuration, events and traces. */
class StatesTests {

    @Test
    void aRunIsDoneOnceItIsNoLongerRunning() {
        assertThat(RunStatus.RUNNING.isDone()).isFalse();
        assertThat(Arrays.stream(RunStatus.values()).filter(RunStatus::isDone))
                .containsExactly(RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED);
    }

    @Test
    void onlySucceededFailedAndCancelledTasksAreFinal() {
        assertThat(Arrays.stream(TaskState.values()).filter(TaskState::isTerminal))
                .containsExactly(TaskState.SUCCEEDED, TaskState.FAILED, TaskState.CANCELLED);
        assertThat(TaskState.of(TaskState.RETRYING.ordinal())).isEqualTo(TaskState.RETRYING);
    }

    @Test
    void devicesAreNamedInLowerCase() {
        assertThat(Device.CPU.id()).isEqualTo("cpu");
        assertThat(Device.GPU.id()).isEqualTo("gpu");
    }
}
