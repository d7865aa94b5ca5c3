package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.NoDeviceException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.memory.PoolSettings;
import io.hts.gpu.support.SimulatedCuda;
import java.util.List;
import org.junit.jupiter.api.Test;

/** GPUs that are there but could not be started: DOWN with the reason, the CPU takes what it can. */
class UnusableGpuBackendTests {

    private static final long MIB = 1L << 20;

    private static final GpuSettings SETTINGS =
            GpuSettings.defaults(32 * MIB).withMemory(new PoolSettings(4 * MIB, 32 * MIB, 4 * MIB, 256));

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB).withDevices(2);

    /** Starts a backend on the device the way the auto-configuration does, keeping its failure. */
    private UnusableGpuBackend failingToStart(int ordinal) {
        cuda.failNext("cuMemAlloc", 700);
        try {
            cuda.backend(ordinal, SETTINGS).close();
        } catch (CudaException ex) {
            return UnusableGpuBackend.failedToStart(cuda.deviceInfo(ordinal), ex);
        }
        throw new AssertionError("the backend started although its first allocation failed");
    }

    @Test
    void aGpuThatCouldNotStartIsDownWithItsDeviceAndCudaError() {
        UnusableGpuBackend down = failingToStart(0);
        DeviceStatus status = down.status();
        assertThat(status.health()).isEqualTo(DeviceHealth.DOWN);
        assertThat(status.capacity()).isZero();
        assertThat(status.usable()).isFalse();
        assertThat(status.detail())
                .isEqualTo(down.reason())
                .startsWith("cuda:0 Simulated GPU could not be started: ")
                .contains("cuMemAlloc", "CUDA_ERROR_ILLEGAL_ADDRESS");
        assertThat(down.errorName()).contains("CUDA_ERROR_ILLEGAL_ADDRESS");
        assertThat(down.ordinal()).isZero();
        assertThat(down.deviceStatuses()).containsExactly(status);
    }

    @Test
    void dualBodiedTasksRunOnTheCpuAndGpuOnlyTasksFailWithTheReason() {
        UnusableGpuBackend down = failingToStart(0);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(down)
                .build()) {
            TaskGraph g = TaskGraph.named("dual");
            Task<String> dual = g.task("dual").bodies(ctx -> "cpu", ctx -> "gpu");
            GraphRun run = s.execute(g);
            assertThat(run.result(dual)).isEqualTo("cpu");
            assertThat(run.profile().tasks())
                    .singleElement()
                    .extracting(t -> t.device())
                    .isEqualTo(Device.CPU);

            TaskGraph only = TaskGraph.named("gpu-only");
            only.task("kernel").gpu(ctx -> 1);
            assertThatThrownBy(() -> s.execute(only))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(NoDeviceException.class)
                    .hasMessageContaining("task 'kernel' has only a GPU body")
                    .hasMessageContaining("DOWN: cuda:0 Simulated GPU could not be started")
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
        }
    }

    @Test
    void devicesDiscoveryCouldNotQueryStandForTheWholeHost() {
        cuda.failNext("cuDeviceGetName", 999);
        GpuDiscovery.Result found = GpuDiscovery.discover(() -> cuda);
        assertThat(found.available()).isFalse();
        assertThat(found.presentButUnusable()).isTrue();
        UnusableGpuBackend down = UnusableGpuBackend.undiscovered(found);
        assertThat(down.ordinal()).isEqualTo(-1);
        assertThat(down.reason())
                .isEqualTo("2 CUDA device(s) cannot be used: CUDA devices could not be queried: "
                        + "the driver reports 2, and cuda:0 failed: cuDeviceGetName failed: CUDA_ERROR_UNKNOWN (999)");
        assertThat(down.status().health()).isEqualTo(DeviceHealth.DOWN);
    }

    @Test
    void theUsableGpusRunAndThoseThatCouldNotStartAreReported() {
        UnusableGpuBackend down = failingToStart(0);
        MultiGpuBackend running = new MultiGpuBackend(List.of(cuda.backend(1, SETTINGS)), cuda);
        PartialGpuBackend gpus = new PartialGpuBackend(running, List.of(down));
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpus)
                .build()) {
            DeviceStatus status = gpus.status();
            assertThat(status.health()).isEqualTo(DeviceHealth.DEGRADED);
            assertThat(status.usable()).isTrue();
            assertThat(status.capacity()).isEqualTo(running.status().capacity());
            assertThat(status.detail())
                    .startsWith(down.reason() + "; running: ")
                    .contains("cuda:1 UP");
            assertThat(gpus.deviceStatuses())
                    .extracting(DeviceStatus::health)
                    .containsExactly(DeviceHealth.DOWN, DeviceHealth.UP);
            assertThat(gpus.deviceStatuses().get(0).detail()).isEqualTo(down.reason());

            TaskGraph g = TaskGraph.named("on-the-gpu");
            Task<Integer> k =
                    g.task("k").gpu(ctx -> ctx.unwrap(GpuContext.class).deviceOrdinal());
            assertThat(s.execute(g).result(k)).isEqualTo(1);

            TaskGraph pinned = TaskGraph.named("pinned");
            Task<String> dual = pinned.task("dual").onGpu(0).bodies(ctx -> "cpu", ctx -> "gpu");
            assertThat(s.execute(pinned).result(dual)).isEqualTo("cpu");

            TaskGraph pinnedOnly = TaskGraph.named("pinned-gpu-only");
            pinnedOnly.task("on-0").onGpu(0).gpu(ctx -> 1);
            assertThatThrownBy(() -> s.execute(pinnedOnly))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(GpuUnavailableException.class)
                    .hasMessageStartingWith("task 'on-0' cannot run on cuda:0 Simulated GPU: ")
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
        }
    }

    @Test
    void withNoGpuRunningTheHostIsDownAndNamesEachGpu() {
        PartialGpuBackend gpus = new PartialGpuBackend(null, List.of(failingToStart(0), failingToStart(1)));
        assertThat(gpus.status().health()).isEqualTo(DeviceHealth.DOWN);
        assertThat(gpus.status().capacity()).isZero();
        assertThat(gpus.status().detail())
                .contains("cuda:0 Simulated GPU could not be started", "cuda:1 Simulated GPU could not be started");
        assertThat(gpus.deviceStatuses()).hasSize(2).allMatch(d -> d.health() == DeviceHealth.DOWN);
        assertThat(gpus.running()).isEmpty();
        assertThatThrownBy(() -> new PartialGpuBackend(null, List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
