package io.hts.sample.sweep;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.sample.SampleProperties;

/**
 * The sweep's graph: {@code observe} makes the observed outbreak; {@code simulate[p]}, one task per
 * grid point, simulates and scores point {@code p} (all independent: the pool spreads them); {@code
 * fit} aggregates them and checks that the best is the observed outbreak's parameters.
 */
public final class EpidemicSweep {

    private final SweepGrid grid;
    private final TaskGraph graph;
    private final TaskGroup<SweepPoint> simulations;
    private final Task<SweepFit> fit;

    /**
     * The sweep the settings describe, as graph {@code sweep}.
     *
     * @param settings the grid and the integration
     */
    public EpidemicSweep(SampleProperties.Sweep settings) {
        this.grid = new SweepGrid(settings);
        this.graph = TaskGraph.named("sweep");
        Task<double[]> observe = graph.task("observe").cpu(ctx -> grid.observed());
        this.simulations = graph.group(
                "simulate", grid.points(), (p, t) -> t.after(observe).cpu(ctx -> grid.simulate(p, ctx.input(observe))));
        this.fit = graph.task("fit").after(simulations).cpu(ctx -> SweepFit.of(ctx.inputs(simulations), grid.truth()));
    }

    /** The grid. */
    public SweepGrid grid() {
        return grid;
    }

    /** The graph. */
    public TaskGraph graph() {
        return graph;
    }

    /** One task per grid point. */
    public TaskGroup<SweepPoint> simulations() {
        return simulations;
    }

    /** The aggregate. */
    public Task<SweepFit> fit() {
        return fit;
    }
}
