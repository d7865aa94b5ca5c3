package io.hts.benchmarks.baseline;

import io.hts.benchmarks.workload.Shape;
import java.util.concurrent.CountedCompleter;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntConsumer;

/**
 * Baseline (b): counted completion on a plain {@link ForkJoinPool}, the leanest hand-written DAG
 * executor on the JDK: one atomic counter per task, a finished task forks the successors whose
 * counter reaches zero, the roots are spread by recursive halving, and a {@link CountedCompleter}
 * counts the finished tasks down to the run's completion.
 */
public final class ForkJoinDag extends CountedCompleter<Void> {

    private static final long serialVersionUID = 1L;

    private final transient Shape shape;
    private final transient IntConsumer body;
    private final AtomicIntegerArray remaining;

    private ForkJoinDag(Shape shape, IntConsumer body) {
        this.shape = shape;
        this.body = body;
        this.remaining = new AtomicIntegerArray(shape.size());
        for (int i = 0; i < shape.size(); i++) {
            remaining.set(i, shape.predecessorCount(i));
        }
        setPendingCount(shape.size() - 1);
    }

    /**
     * Runs the shape and waits for it.
     *
     * @param shape the graph
     * @param pool the pool
     * @param body the work of task {@code i}
     */
    public static void run(Shape shape, ForkJoinPool pool, IntConsumer body) {
        if (shape.size() == 0) {
            return;
        }
        pool.invoke(new ForkJoinDag(shape, body));
    }

    @Override
    public void compute() {
        new Roots(this, 0, shape.rootCount()).fork();
    }

    void runNode(int i) {
        body.accept(i);
        for (int k = shape.successorStart(i), end = shape.successorEnd(i); k < end; k++) {
            int s = shape.successor(k);
            if (remaining.decrementAndGet(s) == 0) {
                new Node(this, s).fork();
            }
        }
        tryComplete();
    }

    private static final class Node extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        private final transient ForkJoinDag run;
        private final int index;

        Node(ForkJoinDag run, int index) {
            this.run = run;
            this.index = index;
        }

        @Override
        protected void compute() {
            run.runNode(index);
        }
    }

    private static final class Roots extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        private final transient ForkJoinDag run;
        private final int from;
        private final int to;

        Roots(ForkJoinDag run, int from, int to) {
            this.run = run;
            this.from = from;
            this.to = to;
        }

        @Override
        protected void compute() {
            int lo = from;
            int hi = to;
            while (hi - lo > 1) {
                int mid = (lo + hi) >>> 1;
                new Roots(run, mid, hi).fork();
                hi = mid;
            }
            run.runNode(run.shape.root(lo));
        }
    }
}
