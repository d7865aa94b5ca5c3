package io.hts.gpu.device;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A real illegal address on a real GPU: the device goes DOWN, the pool is poisoned, and a
 * dual-bodied task submitted afterwards runs on the CPU. It poisons the process's CUDA context,
 * so the kit runs it in a JVM of its own (docs/gpu.md), after the other GPU tests.
 */
class GpuStickyErrorDeviceTests {

    @Test
    void anIllegalAddressTakesTheDeviceDownAndLaterWorkRunsOnTheCpu() throws IOException {
        GpuDiscovery.Result found = GpuRequirement.gpu();
        String ptx;
        try (InputStream in = getClass().getResourceAsStream("faults.ptx")) {
            ptx = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
        GpuBackend gpu = new GpuBackend(found.api(), found.devices().get(0), GpuSettings.defaults(1L << 30), false);
        try (Scheduler s = Scheduler.builder().threads(2).policy(new GpuFirstPolicy()).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("fault");
            g.task("wild-write").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.launch(c.kernel(ptx, "hts_test_write_to"), Dim3.of(1), Dim3.of(32),
                        KernelArguments.of().pointer(0x10L)); // not device memory
                return 0;
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(CudaException.class).rootCause()
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DOWN);
            assertThat(gpu.memory().poisonedBy()).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");

            TaskGraph later = TaskGraph.named("later");
            Task<String> dual = later.task("dual").bodies(ctx -> "cpu", ctx -> "gpu");
            assertThat(s.execute(later).result(dual)).isEqualTo("cpu");
        }
    }
}
