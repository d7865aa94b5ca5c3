package io.hts.engine.run;

import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.Worker;
import org.jspecify.annotations.Nullable;

/**
 * Makes a range of a run's root tasks ready, splitting the range in halves: the upper half is
 * pushed for thieves to take, the lower half is split again, down to {@link #LEAF} roots, which
 * this worker makes ready itself: all but the lowest wait on its deque (for it, or a thief), and
 * the lowest runs right away. A graph with a million independent tasks therefore spreads over the
 * workers in logarithmic steps, without a million submissions through the shared external queue,
 * and with one seeder object per {@code LEAF} roots (a seeder per root cost 24 bytes a task:
 * docs/benchmarks.md). When a root is urgent (a priority above 0), the seeders go through the
 * pool's priority lane at the highest such priority, so that the urgent roots jump the queue as
 * they would in a smaller graph, whose roots its caller makes ready: a worker running a chain
 * looks at the lane between two of its tasks, not at the shared queue.
 */
final class RootSeeder extends PoolTask {

    /** The most roots one seeder makes ready without splitting. */
    static final int LEAF = 8;

    private final GraphRun run;
    private final int from;
    private final int to;

    RootSeeder(GraphRun run, int from, int to) {
        this.run = run;
        this.from = from;
        this.to = to;
    }

    /** Seeds all of a run's roots. */
    static void seed(GraphRun run) {
        queue(new RootSeeder(run, 0, run.topology.rootCount()));
    }

    /**
     * Queues a seeder: in the priority lane when a root is urgent; else on the calling worker's
     * deque (for thieves), or in the shared queue from outside the pool.
     */
    private static void queue(RootSeeder seeder) {
        GraphRun run = seeder.run;
        int urgent = run.plan.urgentRootPriority;
        if (urgent > 0) {
            run.pool.submitPriority(seeder, urgent, 0);
        } else {
            run.pool.submit(seeder);
        }
    }

    @Override
    protected @Nullable PoolTask execute(Worker worker) {
        // another run's count this worker batched reaches that run before user code (a listener of
        // TASK_READY, a policy) runs here: that code may wait for the other run
        worker.flushCountsUnless(run.state);
        int lo = from;
        int hi = to;
        while (hi - lo > LEAF) {
            int mid = (lo + hi) >>> 1;
            queue(new RootSeeder(run, mid, hi));
            hi = mid;
        }
        for (int k = hi - 1; k > lo; k--) { // pushed from the top down: this worker pops them in order
            PoolTask t = run.placement.rootReady(run.topology.root(k));
            if (t != null) {
                worker.push(t);
            }
        }
        return run.placement.rootReady(run.topology.root(lo));
    }
}
