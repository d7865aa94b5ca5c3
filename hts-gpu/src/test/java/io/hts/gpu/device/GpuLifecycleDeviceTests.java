package io.hts.gpu.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Issue 12 on a real GPU: shutdown during device work, pool limits, free memory, reservations. */
@RequiresGpu
class GpuLifecycleDeviceTests {

    private static final long MIB = 1L << 20;

    /** A shutdown asked for while the run's last task is a long GEMM: the scheduler terminates when it ends. */
    @Test
    void shutdownDuringALongGemmTerminatesWhenTheRunEnds() throws Exception {
        GpuDiscovery.Result found = GpuRequirement.gpu();
        GpuBackend gpu = new GpuBackend(found.api(), found.devices().get(0), GpuSettings.defaults(2L << 30), true);
        Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
        try {
            int n = 4096;
            TaskGraph g = TaskGraph.named("shutdown-during-gemm");
            Task<Float> last = g.task("gemms").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer a = c.scratch(4L * n * n);
                DeviceBuffer b = c.scratch(4L * n * n);
                DeviceBuffer out = c.scratch(4L * n * n);
                for (int i = 0; i < 20; i++) {
                    c.blas().gemm(Blas.Precision.FP32, n, n, n, 1f, a, b, 0f, out);
                }
                return 1f;
            });
            GraphRun run = s.submit(g);
            s.shutdown();
            assertThat(run.await(Duration.ofSeconds(60)).result(last)).isEqualTo(1f);
            assertThat(s.awaitTermination(Duration.ofSeconds(20)))
                    .as("no 30 s stall at the end")
                    .isTrue();
        } finally {
            s.close();
        }
    }

    /** A pool limit above the device's memory is refused; free memory never exceeds what the device can give. */
    @Test
    void aPoolLimitAboveTheDeviceIsRefusedAndFreeMemoryIsWhatTheDeviceCanGive() {
        GpuDiscovery.Result found = GpuRequirement.gpu();
        CudaApi api = found.api();
        DeviceInfo device = found.devices().get(0);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new GpuBackend(api, device, GpuSettings.defaults(4 * device.totalMemory()), false))
                .withMessageContaining("hts.gpu.memory-pool.maximum")
                .withMessageContaining("is more than the");
        try (GpuBackend gpu = new GpuBackend(api, device, GpuSettings.defaults(device.totalMemory() / 10 * 9), false)) {
            api.makeCurrent(device.ordinal());
            long deviceFree = api.memoryInfo()[0];
            long inArenas = gpu.memory().statistics().free();
            assertThat(gpu.status().freeMemoryBytes()).isLessThanOrEqualTo(deviceFree + inArenas);
        }
    }

    /** The declared gpu-memory reservation lasts as long as the buffer the task returns. */
    @Test
    void aReservationLastsAsLongAsTheReturnedBuffer() throws Exception {
        GpuDiscovery.Result found = GpuRequirement.gpu();
        GpuBackend gpu = new GpuBackend(found.api(), found.devices().get(0), GpuSettings.defaults(2L << 30), false);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(gpu)
                .resource("gpu-memory", 1024 * MIB)
                .build()) {
            TaskGraph g = TaskGraph.named("reservation");
            Task<DeviceBuffer> produce = g.task("produce")
                    .resource("gpu-memory", 768 * MIB)
                    .gpu(ctx -> {
                        GpuContext c = ctx.unwrap(GpuContext.class);
                        DeviceBuffer b = c.allocate(768 * MIB);
                        c.kernels().fill(16, 1f, b);
                        return b;
                    });
            DeviceBuffer kept = s.execute(g).result(produce);
            assertThat(s.resources().available("gpu-memory")).isEqualTo(256 * MIB);
            kept.close();
            assertThat(s.resources().available("gpu-memory")).isEqualTo(1024 * MIB);
        }
    }
}
