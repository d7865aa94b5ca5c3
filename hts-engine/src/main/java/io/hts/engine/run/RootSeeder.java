package io.hts.engine.run;

import io.hts.engine.exec.PoolTask;
import io.hts.engine.exec.Worker;
import org.jspecify.annotations.Nullable;

/**
 * Makes a range of a run's root tasks ready, splitting the range in halves: the upper half is
 * pushed for thieves to take, the lower half is split again, and the lowest root runs right
 * away. A graph with a million independent tasks therefore spreads over the workers in
 * logarithmic steps, without a million submissions through the shared external queue.
 */
final class RootSeeder extends PoolTask {

    private final GraphRun run;
    private final int from;
    private final int to;

    RootSeeder(GraphRun run, int from, int to) {
        this.run = run;
        this.from = from;
        this.to = to;
    }

    @Override
    protected @Nullable PoolTask execute(Worker worker) {
        int lo = from;
        int hi = to;
        while (hi - lo > 1) {
            int mid = (lo + hi) >>> 1;
            worker.push(new RootSeeder(run, mid, hi));
            hi = mid;
        }
        return run.placement.rootReady(run.topology.root(lo));
    }
}
