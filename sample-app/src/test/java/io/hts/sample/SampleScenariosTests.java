package io.hts.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/** The three scenarios compute what their CPU references compute, on whatever devices the policy picks. */
@SpringBootTest(properties = {"sample.run-jobs=false", "hts.scheduler.policy=round-robin"})
class SampleScenariosTests {

    @Autowired
    Scheduler scheduler;

    @SuppressWarnings("unchecked")
    private <T> T result(GraphRun run, String task) {
        return (T) run.result((Task<Object>) run.graph().find(task).orElseThrow());
    }

    @Test
    void thePreprocessingPipelineMeansTheColumn() {
        GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("preprocessing"));
        PreprocessingPipeline.Summary summary = result(run, "merge");
        float[] all = PreprocessingPipeline.readings(PreprocessingPipeline.ROWS);
        double sum = 0;
        for (float v : all) {
            sum += v * PreprocessingPipeline.SCALE;
        }
        assertThat(summary.count()).isEqualTo(PreprocessingPipeline.ROWS);
        assertThat(summary.mean()).isCloseTo(sum / all.length, within(1e-4));
    }

    @Test
    void theSweepFindsTheStiffestMostDampedOscillator() {
        GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("sweep"));
        ParameterSweep.Point best = result(run, "best");
        assertThat(run.profile().tasks()).hasSize(ParameterSweep.STIFFNESSES * ParameterSweep.DAMPINGS + 1);
        assertThat(best.stiffness()).isEqualTo(ParameterSweep.STIFFNESSES);
        assertThat(best.amplitude()).isPositive().isLessThan(1.0 / (ParameterSweep.STIFFNESSES - 1));
    }

    @Test
    void theOperatorSuiteChecksumsEveryOperator() {
        TaskGraph g = scheduler.registeredGraphs().get("operators");
        GraphRun run = scheduler.execute(g);
        Map<String, Double> checksums = result(run, "report");
        assertThat(checksums).containsOnlyKeys("gemm-128", "gemm-256", "gemm-384", "axpy");
        int n = 128;
        double expected = OperatorBenchmark.checksum(
                OperatorBenchmark.gemmOnCpu(n, OperatorBenchmark.matrix(n, 1), OperatorBenchmark.matrix(n, 2)));
        assertThat(checksums.get("gemm-128")).isCloseTo(expected, within(1e-3 * (1 + Math.abs(expected))));
        assertThat(SampleJobs.describe(run))
                .startsWith("operators: SUCCEEDED in ")
                .contains("result: {gemm-128=");
        if (scheduler
                .systemStatus()
                .usable(io.hts.engine.graph.Device.GPU)) { // a working GPU: round-robin puts some operators there
            assertThat(run.profile().tasks()).anyMatch(t -> t.device() == io.hts.engine.graph.Device.GPU);
        }
    }
}
