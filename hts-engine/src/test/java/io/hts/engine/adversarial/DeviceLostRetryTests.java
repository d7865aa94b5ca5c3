package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A device backend reports an attempt with {@link DeviceTask#failDeviceLost}: the error took its
 * device out of service, so the task is not retried there, whatever the device's status still
 * says and whatever the policy prefers. Against a plain {@link DeviceTask#fail}, which is retried
 * on the device.
 */
class DeviceLostRetryTests {

    private static final IllegalStateException LOST =
            new IllegalStateException("test: the device's context is poisoned");

    /** A backend that starts each attempt and reports it failed, lost or not. */
    private static ScriptedBackend failing(boolean lost) {
        return new ScriptedBackend(2, (be, t) -> {
            if (!t.start(0)) {
                return;
            }
            if (lost) {
                t.failDeviceLost(LOST);
            } else {
                be.fail(t, LOST);
            }
        });
    }

    /**
     * Runs {@code g} on a backend that fails every attempt (lost or not): the run fails, {@code t}
     * with the backend's error, after {@code dispatched} attempts sent to the device.
     */
    private static void assertFailsWithTheDevicesError(boolean lost, TaskGraph g, Task<?> t, int dispatched)
            throws Exception {
        ScriptedBackend b = failing(lost);
        Scheduler s = DeviceBackendBreakTests.scheduler(b);
        try {
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
            assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
            assertThat(run.error(t)).containsSame(LOST);
            assertThat(b.dispatched).as("attempts dispatched to the device").hasSize(dispatched);
        } finally {
            DeviceBackendBreakTests.closeQuietly(s);
        }
    }

    @Test
    void aGpuOnlyTaskWhoseDeviceIsLostEndsWithThatErrorWithoutARetry() throws Exception {
        TaskGraph g = TaskGraph.named("lost-gpu-only");
        Task<Integer> t = g.task("t").retries(3, Duration.ZERO).gpu(ctx -> 1);
        assertFailsWithTheDevicesError(true, g, t, 1);
    }

    @Test
    void aDualBodiedTaskWhoseDeviceIsLostRetriesOnTheCpuThoughTheDeviceLooksUp() throws Exception {
        ScriptedBackend b = failing(true);
        AtomicInteger placedOnCpu = new AtomicInteger();
        Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(b)
                .policy(new io.hts.engine.policy.GpuFirstPolicy())
                .listener(e -> {
                    if (e.type() == EventType.TASK_PLACED && e.device() == Device.CPU) {
                        placedOnCpu.incrementAndGet();
                    }
                })
                .build();
        try {
            TaskGraph g = TaskGraph.named("lost-dual");
            Task<String> t = g.task("t").retries(2, Duration.ZERO).bodies(ctx -> "cpu", ctx -> "gpu");
            GraphRun run = s.submit(g).await(Duration.ofSeconds(10));
            assertThat(run.result(t)).isEqualTo("cpu");
            assertThat(b.dispatched).as("attempts dispatched to the device").hasSize(1);
            assertThat(placedOnCpu).as("placements on the CPU, with the reason").hasValue(1);
        } finally {
            DeviceBackendBreakTests.closeQuietly(s);
        }
    }

    @Test
    void aDualBodiedTaskWithoutRetriesWhoseDeviceIsLostFailsWithThatError() throws Exception {
        TaskGraph g = TaskGraph.named("lost-dual-no-retry");
        Task<String> t = g.task("t").bodies(ctx -> "cpu", ctx -> "gpu");
        assertFailsWithTheDevicesError(true, g, t, 1);
    }

    /** Control: a plain failure is retried on the device, as configured. */
    @Test
    void aPlainDeviceFailureIsRetriedOnTheDevice() throws Exception {
        TaskGraph g = TaskGraph.named("plain");
        Task<Integer> t = g.task("t").retries(2, Duration.ZERO).gpu(ctx -> 1);
        assertFailsWithTheDevicesError(false, g, t, 3);
    }
}
