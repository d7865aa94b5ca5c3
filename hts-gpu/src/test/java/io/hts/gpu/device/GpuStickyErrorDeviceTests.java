package io.hts.gpu.device;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.gpu.support.ChildJvm;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A real illegal address on a real GPU: the device goes DOWN, the pool is poisoned, and a
 * dual-bodied task submitted afterwards runs on the CPU. That poisons the process's CUDA context,
 * after which every GPU test in the same JVM would fail, and the device kit runs the test classes
 * of several modules in one JVM: so the scenario ({@link GpuStickyErrorScenario}) runs in a child
 * JVM of its own, started only where a GPU is found ({@link GpuRequirement}).
 */
@RequiresGpu
class GpuStickyErrorDeviceTests {

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void anIllegalAddressTakesTheDeviceDownAndLaterWorkRunsOnTheCpu() throws Exception {
        GpuRequirement.gpu(); // skips without a GPU, fails with HTS_GPU_TESTS=required
        String output = ChildJvm.runToSuccess(GpuStickyErrorScenario.class, Duration.ofMinutes(2));
        assertThat(output).contains(GpuStickyErrorScenario.PASSED);
    }
}
