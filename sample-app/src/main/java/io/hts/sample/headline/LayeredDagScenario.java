package io.hts.sample.headline;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.CriticalPath;
import io.hts.engine.observe.Elapsed;
import io.hts.engine.run.GraphRun;
import io.hts.sample.Format;
import io.hts.sample.RunFigures;
import io.hts.sample.SampleProperties;
import io.hts.sample.SampleScenario;
import java.util.List;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Scenario (d2) in the summary: the layered DAG, against the seed's target of a scheduling overhead
 * of at most 5 % of the time for 5,000 nodes of depth 100 (here: the share of worker time in which
 * a task was ready and a worker idle).
 */
@Component
@Order(5)
public class LayeredDagScenario implements SampleScenario {

    /** The seed's ceiling on the scheduler's share. */
    public static final double SEED_OVERHEAD = 0.05;

    private final CalibratedSpin spin;
    private final LayeredDag dag;
    private final TaskGraph graph;

    LayeredDagScenario(SampleProperties properties, CalibratedSpin spin) {
        SampleProperties.Headline h = properties.headline();
        this.spin = spin;
        this.dag = new LayeredDag(h.dagNodes(), h.dagDepth(), h.maxParents(), h.seed());
        this.graph = dag.graph(spin);
    }

    @Override
    public String label() {
        return "(d2) layered DAG";
    }

    @Override
    public String description() {
        return Format.of(
                "%s nodes in %d layers, %s random edges between consecutive layers, %s of busy work a node",
                Format.count(dag.nodes()), dag.depth(), Format.count(dag.edges()), Elapsed.of(spin.target()));
    }

    @Override
    public TaskGraph graph() {
        return graph;
    }

    @Override
    public List<String> results(GraphRun run) {
        RunFigures f = RunFigures.of(run.profile());
        CriticalPath path = run.profile().criticalPath();
        return List.of(
                Format.of(
                        "every node ran; depth %d (longest dependency chain); measured critical path %d tasks, %s",
                        LayeredDag.longestChain(graph.compile()), path.tasks().size(), Elapsed.of(path.length())),
                Format.of(
                        "seed target: scheduler overhead <= %s: %s (%s; %s of worker time with no task ready)",
                        Format.percent(SEED_OVERHEAD),
                        f.schedulerShare() <= SEED_OVERHEAD ? "met" : "MISSED",
                        Format.percent(f.schedulerShare()),
                        Format.percent(f.shapeShare())));
    }
}
