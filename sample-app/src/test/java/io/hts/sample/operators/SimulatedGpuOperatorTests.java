package io.hts.sample.operators;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.GpuDiscoverer;
import io.hts.engine.graph.Device;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.support.SimulatedCuda;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.ActiveProfiles;

/**
 * Scenario (c)'s GPU stages on hts-gpu's simulated device (host memory, the built-in kernels in
 * Java, no cuBLAS): the AXPY is uploaded, run, timed, fetched and checked on the GPU; the GEMM says
 * why it was not measured instead of failing the run.
 */
@SpringBootTest(
        properties = {
            "sample.run-jobs=false",
            "hts.gpu.memory-pool.initial=4MB",
            "hts.gpu.memory-pool.maximum=32MB",
            "hts.gpu.memory-pool.arena-size=4MB"
        })
@ActiveProfiles("small")
class SimulatedGpuOperatorTests {

    @TestConfiguration(proxyBeanMethods = false)
    static class SimulatedGpu {

        @Bean
        static GpuDiscoverer simulatedGpu() {
            return GpuDiscoverer.through(() -> new SimulatedCuda(64L << 20));
        }
    }

    @Autowired
    Scheduler scheduler;

    @Autowired
    OperatorScenario scenario;

    @Test
    void theGpuStagesRunOnTheDeviceAndAGemmWithoutCublasIsReportedNotMeasured() {
        assertThat(scheduler.systemStatus().usable(Device.GPU)).isTrue();
        GraphRun run = scheduler.submit(scenario.graph()).await();

        List<String> gpuTasks = run.profile().tasks().stream()
                .filter(t -> t.device() == Device.GPU)
                .map(TaskTiming::taskName)
                .toList();
        assertThat(gpuTasks).containsExactlyInAnyOrder("gpu-gemm-64", "gpu-axpy");
        String table = String.join("\n", scenario.results(run));
        assertThat(table)
                .containsPattern("AXPY +10,000 +[0-9.,]+ GB/s +[0-9.,]+ GB/s")
                .containsPattern("GEMM +64 +[0-9.,]+ GFLOP/s +not measured")
                .contains("not measured: cuBLAS is not available")
                .contains("GPU: ");
    }
}
