package io.hts.engine.exec.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Linearizability of {@link PriorityLane} under Lincheck, against an independent sequential
 * specification ({@link Specification}: a list scanned for the best entry) that states the lane's
 * contract: higher priority first, then lower cost, then earlier arrival.
 *
 * <p>Operations return the polled task as {@code "id/priority/cost"}, so a result identifies both
 * the task and the keys it was ordered by; equal strings are indistinguishable tasks.
 */
class PriorityLaneLincheckTests {

    @Test
    void modelChecking() {
        new ModelCheckingOptions()
                .iterations(10)
                .invocationsPerIteration(200)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(3)
                .actorsAfter(2)
                .sequentialSpecification(Specification.class)
                .check(Lane.class);
    }

    @Test
    void stress() {
        new StressOptions()
                .iterations(5)
                .invocationsPerIteration(200)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(3)
                .actorsAfter(2)
                .sequentialSpecification(Specification.class)
                .check(Lane.class);
    }

    @Test
    void specificationOrdersByPriorityThenCostThenArrival() {
        // The reference the Lincheck runs compare against, checked against the real lane once,
        // sequentially, on a sequence that needs all three keys.
        int[][] adds = {{1, 0, 3}, {2, 2, 2}, {3, 1, 1}, {4, 2, 1}, {5, 2, 2}, {6, 0, 3}, {7, 1, 1}};
        Specification spec = new Specification();
        Lane lane = new Lane();
        for (int[] a : adds) {
            spec.add(a[0], a[1], a[2]);
            lane.add(a[0], a[1], a[2]);
        }
        List<String> fromSpec = new ArrayList<>();
        List<String> fromLane = new ArrayList<>();
        for (int i = 0; i <= adds.length; i++) {
            fromSpec.add(spec.poll());
            fromLane.add(lane.poll());
        }
        assertThat(fromSpec).containsExactly("4/2/1", "2/2/2", "5/2/2", "3/1/1", "7/1/1", "1/0/3", "6/0/3", null);
        assertThat(fromLane).isEqualTo(fromSpec);
    }

    /** A pool task that only carries its keys; never executed. */
    static final class KeyedTask extends PoolTask {
        final int id;
        final int priority;
        final long cost;

        KeyedTask(int id, int priority, long cost) {
            this.id = id;
            this.priority = priority;
            this.cost = cost;
        }

        @Override
        protected @Nullable PoolTask execute(Worker worker) {
            return null;
        }

        @Override
        public String toString() {
            return id + "/" + priority + "/" + cost;
        }
    }

    /** The Lincheck target: one lane, used by every thread (any worker or submitter adds and polls). */
    @Param(name = "id", gen = IntGen.class, conf = "1:5")
    @Param(name = "priority", gen = IntGen.class, conf = "0:2")
    @Param(name = "cost", gen = IntGen.class, conf = "1:3")
    public static class Lane {

        private final PriorityLane lane = new PriorityLane();

        public Lane() {}

        @Operation
        public void add(
                @Param(name = "id") int id, @Param(name = "priority") int priority, @Param(name = "cost") int cost) {
            lane.add(new KeyedTask(id, priority, cost), priority, cost);
        }

        @Operation
        public @Nullable String poll() {
            PoolTask task = lane.poll();
            return task == null ? null : task.toString();
        }

        @Operation
        public int size() {
            return lane.size();
        }
    }

    /** The sequential specification: the contract of the lane, with no heap. */
    public static class Specification {

        private final List<KeyedTask> entries = new ArrayList<>();

        public Specification() {}

        public void add(int id, int priority, int cost) {
            // list order is arrival order
            entries.add(new KeyedTask(id, priority, cost));
        }

        public @Nullable String poll() {
            if (entries.isEmpty()) {
                return null;
            }
            int best = 0;
            for (int i = 1; i < entries.size(); i++) {
                KeyedTask e = entries.get(i);
                KeyedTask b = entries.get(best);
                if (e.priority > b.priority || (e.priority == b.priority && e.cost < b.cost)) {
                    best = i;
                }
            }
            return entries.remove(best).toString();
        }

        public int size() {
            return entries.size();
        }
    }
}
