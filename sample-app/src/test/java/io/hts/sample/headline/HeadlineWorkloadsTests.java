package io.hts.sample.headline;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.sample.SampleProperties;
import io.hts.sample.SmallSample;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Scenario (d) at a small scale: the DAG has the shape asked for, and both workloads compute what a sequential loop computes. */
@SmallSample
class HeadlineWorkloadsTests {

    @Autowired
    Scheduler scheduler;

    @Autowired
    SampleProperties properties;

    @Autowired
    IndependentScenario independent;

    @Autowired
    LayeredDagScenario layered;

    private final CalibratedSpin spin = CalibratedSpin.of(Duration.ofMillis(1), 2_000);

    @Test
    void theIndependentTasksReturnWhatTheLoopReturns() {
        IndependentTasks tasks = new IndependentTasks(300, spin);
        GraphRun run = scheduler.submit(tasks.graph()).await();
        List<Long> expected = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            expected.add(spin.work(i));
        }
        assertThat(run.results(tasks.tasks())).isEqualTo(expected);
        assertThat(IndependentTasks.checksum(run.results(tasks.tasks())))
                .isEqualTo(IndependentTasks.checksum(expected));
        assertThat(tasks.graph().compile().edgeCount()).isZero();
    }

    @Test
    void theLayeredDagHasTheAskedShapeAndItsRunIsTheSequentialEvaluation() {
        LayeredDag dag = new LayeredDag(103, 10, 3, 7);
        TaskGraph graph = dag.graph(spin);
        GraphTopology topology = graph.compile();
        assertThat(topology.size()).isEqualTo(103);
        assertThat(topology.edgeCount()).isEqualTo(dag.edges());
        // layers of 11 (the first three) and 10; every edge from the layer just above; 1 to 3 parents
        for (int node = 0; node < topology.size(); node++) {
            String name = topology.name(node);
            int layer = Integer.parseInt(name.substring(1, name.indexOf('[')));
            assertThat(topology.inDegree(node)).as(name).isBetween(layer == 0 ? 0 : 1, layer == 0 ? 0 : 3);
            for (String parent : topology.predecessorNames(node)) {
                assertThat(parent).as(name).startsWith("L" + (layer - 1) + "[");
            }
        }
        assertThat(LayeredDag.longestChain(topology)).isEqualTo(10);
        assertThat(graph.find("L0[10]")).isPresent();
        assertThat(graph.find("L3[10]")).isEmpty();
        assertThat(new LayeredDag(103, 10, 3, 7).edges())
                .as("the same seed, the same edges")
                .isEqualTo(dag.edges());

        GraphRun run = scheduler.submit(graph).await();
        long[] expected = dag.evaluate(spin);
        for (Task<?> t : graph.tasks()) {
            assertThat(run.result(t)).as(t.name()).isEqualTo(expected[t.index()]);
        }
    }

    @Test
    void theSpinIsDeterministicAndCalibratesToSomeWork() {
        assertThat(CalibratedSpin.spin(1_000, 42)).isEqualTo(CalibratedSpin.spin(1_000, 42));
        assertThat(CalibratedSpin.spin(1_000, 42)).isNotEqualTo(CalibratedSpin.spin(1_001, 42));
        CalibratedSpin calibrated = CalibratedSpin.calibrate(Duration.ofNanos(500_000));
        assertThat(calibrated.iterations()).isPositive();
        assertThat(calibrated.target()).isEqualTo(Duration.ofNanos(500_000));
    }

    @Test
    void theScenariosReportTheSeedsTargets() {
        GraphRun independentRun = scheduler.submit(independent.graph()).await();
        assertThat(String.join("\n", independent.results(independentRun)))
                .contains("200 of 200 tasks returned", "seed target: 10,000 x 0.5 ms in <= 2 s on 8 threads")
                .containsPattern("efficiency >= 31.3 %: (met|MISSED)");
        GraphRun dagRun = scheduler.submit(layered.graph()).await();
        assertThat(String.join("\n", layered.results(dagRun)))
                .contains("every node ran; depth 12 (longest dependency chain); measured critical path")
                .containsPattern("seed target: scheduler overhead <= 5.0 %: (met|MISSED)");
        assertThat(layered.description()).startsWith(properties.headline().dagNodes() + " nodes in 12 layers");
    }
}
