package io.hts.gpu.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The scenario of {@link GpuStickyErrorDeviceTests}, run in a JVM of its own because it poisons the
 * process's CUDA context: a real illegal address takes the device DOWN, poisons the pool, and a
 * dual-bodied task submitted afterwards runs on the CPU. Prints {@link #PASSED} and exits with 0 when
 * every assertion holds; prints the failure and exits with 1 otherwise (2 without a usable GPU).
 */
public final class GpuStickyErrorScenario {

    /** The line printed when the scenario passed. */
    static final String PASSED = "GpuStickyErrorScenario PASSED";

    private GpuStickyErrorScenario() {}

    public static void main(String[] args) {
        int code;
        try {
            code = run();
        } catch (Throwable ex) {
            System.out.println("GpuStickyErrorScenario FAILED");
            ex.printStackTrace(System.out);
            code = 1;
        }
        System.out.flush();
        System.exit(code); // the poisoned context's threads must not keep the JVM alive
    }

    private static int run() throws IOException {
        GpuDiscovery.Result found = GpuDiscovery.discover();
        if (!found.available() || found.api() == null) {
            System.out.println("GpuStickyErrorScenario: no usable GPU in the child JVM: " + found.reason());
            return 2;
        }
        String ptx;
        try (InputStream in = GpuStickyErrorScenario.class.getResourceAsStream("faults.ptx")) {
            assertThat(in).as("faults.ptx beside this class").isNotNull();
            ptx = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
        GpuBackend gpu = new GpuBackend(found.api(), found.devices().get(0), GpuSettings.defaults(1L << 30), false);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .build()) {
            TaskGraph g = TaskGraph.named("fault");
            g.task("wild-write").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.launch(
                        c.kernel(ptx, "hts_test_write_to"),
                        Dim3.of(1),
                        Dim3.of(32),
                        KernelArguments.of().pointer(0x10L)); // not device memory
                return 0;
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(run::await)
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(CudaException.class)
                    .rootCause()
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
            // the culprit fails first (its CUDA error is the run's first failure), then the device goes
            // DOWN: a caller that returned from await may look in between
            await().atMost(Duration.ofSeconds(10)).until(() -> gpu.status().health() == DeviceHealth.DOWN);
            assertThat(gpu.memory().poisonedBy()).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");

            TaskGraph later = TaskGraph.named("later");
            Task<String> dual = later.task("dual").bodies(ctx -> "cpu", ctx -> "gpu");
            assertThat(s.execute(later).result(dual)).isEqualTo("cpu");
        }
        System.out.println(PASSED + ": CUDA_ERROR_ILLEGAL_ADDRESS took "
                + found.devices().get(0) + " DOWN, poisoned its pool, and a dual-bodied task ran on the CPU");
        return 0;
    }
}
