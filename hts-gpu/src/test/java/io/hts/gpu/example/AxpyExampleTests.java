package io.hts.gpu.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.support.DocExamples;
import io.hts.gpu.support.SimulatedCuda;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The example of docs/gpu.md: the page shows it as written (with the module's other examples),
 * it runs wherever it is (on the CPU without a GPU), and its GPU body computes what its CPU body
 * does (on a simulated device).
 */
class AxpyExampleTests {

    @Test
    void thePagesShowTheGpuModulesExamplesAsWritten() {
        DocExamples.assertShownAsWritten("hts-gpu");
    }

    @Test
    void itRunsOnTheFirstGpuOrOnTheCpu() throws Exception {
        assertThat(DocExamples.printedBy(AxpyExample::main)).startsWith("y[0] = 4.0 on ");
    }

    @Test
    void itsGpuBodyGivesWhatItsCpuBodyGives() {
        float[] x = new float[1000];
        float[] y = new float[1000];
        for (int i = 0; i < x.length; i++) {
            x[i] = i;
            y[i] = 1000 - i;
        }
        SimulatedCuda cuda = new SimulatedCuda(256L << 20);
        // The default policy sends a task whose costs are not known yet to the device with more
        // free slots: more streams than CPU workers make that the GPU on any machine (with 4
        // streams the 16-core GPU machine ran the CPU body and the check below failed there).
        int streams = Runtime.getRuntime().availableProcessors() + 1;
        float[] onGpu = AxpyExample.axpy(cuda.backend(streams), x, y);
        assertThat(cuda.callsOf("cuLaunchKernel")).as("the GPU body ran").isEqualTo(1);
        assertThat(onGpu).containsExactly(AxpyExample.cpuAxpy(x, y));
        assertThat(Arrays.copyOf(onGpu, 3)).containsExactly(1000f, 1001f, 1002f);
    }
}
