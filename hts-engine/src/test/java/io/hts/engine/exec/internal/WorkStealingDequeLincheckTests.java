package io.hts.engine.exec.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * Linearizability of {@link WorkStealingDeque} under Lincheck: {@code push}/{@code pop} by the owner
 * only (one non-parallel group, so Lincheck runs them all on one thread), {@code steal} from any
 * thread. The sequential specification is the deque itself run sequentially (LIFO at the bottom,
 * FIFO at the top), which {@code WorkStealingDequeTests} pins down deterministically.
 *
 * <p>{@code push} returns a wake-up hint (whether the deque looked empty), which is deliberately not
 * linearizable (it reads {@code top} without a fence); the tested operation returns nothing, so the
 * check is about which elements the operations return.
 *
 * <p>Growth: the initial capacity (256) is far beyond any scenario Lincheck can explore, so
 * {@link FullDeque} starts with the array exactly full; its first push in the parallel part (unless
 * a steal came first) copies the array while thieves read it. Growth order and capacity are also
 * covered deterministically by {@code WorkStealingDequeTests.growsBeyondItsInitialCapacityKeepingOrder}.
 */
class WorkStealingDequeLincheckTests {

    @Test
    void modelCheckingFromEmpty() {
        new ModelCheckingOptions()
                .iterations(20)
                .invocationsPerIteration(600)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .check(EmptyDeque.class);
    }

    @Test
    void modelCheckingAcrossGrowth() {
        new ModelCheckingOptions()
                .iterations(10)
                .invocationsPerIteration(300)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(0)
                .actorsAfter(2)
                // grow() copies 256 slots in one loop; the default bound (50) would report it as a livelock
                .loopBound(1_000)
                .check(FullDeque.class);
    }

    @Test
    void stressFromEmpty() {
        new StressOptions()
                .iterations(5)
                .invocationsPerIteration(300)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .check(EmptyDeque.class);
    }

    @Test
    void fullDequeReallyGrowsOnItsFirstPush() {
        FullDeque full = new FullDeque();
        int capacity = full.deque.capacity();
        assertThat(full.deque.size()).isEqualTo(capacity);
        full.push(1);
        assertThat(full.deque.capacity()).isGreaterThan(capacity);
    }

    /** The Lincheck target: a new (empty) deque, as every worker starts with. */
    @Param(name = "element", gen = IntGen.class, conf = "1:9")
    public static class EmptyDeque {

        final WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();

        public EmptyDeque() {}

        @Operation(nonParallelGroup = "owner")
        public void push(@Param(name = "element") int element) {
            deque.push(element);
        }

        @Operation(nonParallelGroup = "owner")
        public Integer pop() {
            return deque.pop();
        }

        @Operation
        public Integer steal() {
            return deque.steal();
        }
    }

    /**
     * The Lincheck target for growth: the deque holds exactly its initial capacity (elements 101,
     * 102, ...; pushed elements are 1..9), so the next push grows the array.
     */
    public static class FullDeque extends EmptyDeque {

        public FullDeque() {
            int capacity = deque.capacity();
            for (int i = 0; i < capacity; i++) {
                deque.push(101 + i);
            }
        }
    }
}
