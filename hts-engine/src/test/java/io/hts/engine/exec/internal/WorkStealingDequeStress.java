package io.hts.engine.exec.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress tests of {@link WorkStealingDeque}: the races its class comment names (the owner's
 * {@code pop} against a thief's {@code steal} on the last element, thieves against each other, the
 * publication of a pushed element, growth while a thief reads the old array).
 *
 * <p>Not JUnit tests: {@code ./mvnw verify} runs them through {@code org.openjdk.jcstress.Main} (the
 * {@code jcstress} execution of {@code hts-engine/pom.xml}); the annotation processor generates the
 * harness classes during test-compile. jcstress 0.16 runs a test only when the machine has a CPU for
 * each actor (an arbiter runs after the actors and needs none of its own); others it skips ("No
 * scheduling is possible, these tests would not run"). So every test here has two actors and runs on
 * a 2-CPU machine, except {@link TwoElementsPopVsTwoThieves} (three actors), which runs only on
 * machines with at least 3 CPUs; the build prints a warning when it is skipped.
 *
 * <p>Encoding of the results: an element taken by {@code pop}/{@code steal} is reported as its value
 * (elements are positive), {@code null} as {@code 0}.
 */
public final class WorkStealingDequeStress {

    private WorkStealingDequeStress() {}

    /** The element's value, or 0 for {@code null}. */
    static int value(Integer element) {
        return element == null ? 0 : element;
    }

    /** Pops until empty (owner side; arbiters only) and returns how many elements were left. */
    static int drain(WorkStealingDeque<Integer> deque) {
        int n = 0;
        while (deque.pop() != null) {
            n++;
        }
        while (deque.steal() != null) {
            n++;
        }
        return n;
    }

    /**
     * After a race the deque must still work: a new element is taken exactly once, by the first of
     * a steal and a pop. Returns 1 when it does.
     */
    static int stillConsistent(WorkStealingDeque<Integer> deque) {
        if (!deque.isEmpty() || deque.size() != 0) {
            return 0;
        }
        deque.push(7);
        Integer stolen = deque.steal();
        Integer popped = deque.pop();
        return stolen != null && stolen == 7 && popped == null && deque.isEmpty() ? 1 : 0;
    }

    @JCStressTest
    @Description("One element; the owner pops while a thief steals: exactly one of them gets it.")
    @Outcome(id = "1, 0, 0, 1", expect = ACCEPTABLE, desc = "the owner's pop won the last element")
    @Outcome(id = "0, 1, 0, 1", expect = ACCEPTABLE, desc = "the thief's steal won the last element")
    @Outcome(id = "1, 1, .*", expect = FORBIDDEN, desc = "both got the element")
    @Outcome(id = "0, 0, .*", expect = FORBIDDEN, desc = "neither got the element")
    @Outcome(expect = FORBIDDEN, desc = "element lost, duplicated or deque left inconsistent")
    @State
    public static class LastElementPopVsSteal {
        private final WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();

        public LastElementPopVsSteal() {
            deque.push(1);
        }

        @Actor
        public void owner(IIII_Result r) {
            r.r1 = value(deque.pop());
        }

        @Actor
        public void thief(IIII_Result r) {
            r.r2 = value(deque.steal());
        }

        @Arbiter
        public void after(IIII_Result r) {
            r.r3 = drain(deque);
            r.r4 = stillConsistent(deque);
        }
    }

    @JCStressTest
    @Description("Two elements; the owner pops while a thief steals: the owner gets the newer, the "
            + "thief the older, also when the steal turns the pop into a last-element race.")
    @Outcome(id = "2, 1, 0, 1", expect = ACCEPTABLE, desc = "pop took the bottom, steal the top")
    @Outcome(
            expect = FORBIDDEN,
            desc = "element lost, duplicated, taken from the wrong end, or deque left inconsistent")
    @State
    public static class TwoElementsPopVsSteal {
        private final WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();

        public TwoElementsPopVsSteal() {
            deque.push(1);
            deque.push(2);
        }

        @Actor
        public void owner(IIII_Result r) {
            r.r1 = value(deque.pop());
        }

        @Actor
        public void thief(IIII_Result r) {
            r.r2 = value(deque.steal());
        }

        @Arbiter
        public void after(IIII_Result r) {
            r.r3 = drain(deque);
            r.r4 = stillConsistent(deque);
        }
    }

    @JCStressTest
    @Description("One element, two thieves: exactly one of them gets it.")
    @Outcome(id = "1, 0, 0, 1", expect = ACCEPTABLE, desc = "the first thief won")
    @Outcome(id = "0, 1, 0, 1", expect = ACCEPTABLE, desc = "the second thief won")
    @Outcome(expect = FORBIDDEN, desc = "element lost or duplicated, or deque left inconsistent")
    @State
    public static class LastElementTwoThieves {
        private final WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();

        public LastElementTwoThieves() {
            deque.push(1);
        }

        @Actor
        public void thief1(IIII_Result r) {
            r.r1 = value(deque.steal());
        }

        @Actor
        public void thief2(IIII_Result r) {
            r.r2 = value(deque.steal());
        }

        @Arbiter
        public void after(IIII_Result r) {
            r.r3 = drain(deque);
            r.r4 = stillConsistent(deque);
        }
    }

    @JCStressTest
    @Description("Two elements, two thieves: each gets a different one, in FIFO order of their CASes.")
    @Outcome(id = "1, 2, 0, 1", expect = ACCEPTABLE, desc = "the first thief claimed the top first")
    @Outcome(id = "2, 1, 0, 1", expect = ACCEPTABLE, desc = "the second thief claimed the top first")
    @Outcome(expect = FORBIDDEN, desc = "element lost or duplicated, or deque left inconsistent")
    @State
    public static class TwoElementsTwoThieves {
        private final WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();

        public TwoElementsTwoThieves() {
            deque.push(1);
            deque.push(2);
        }

        @Actor
        public void thief1(IIII_Result r) {
            r.r1 = value(deque.steal());
        }

        @Actor
        public void thief2(IIII_Result r) {
            r.r2 = value(deque.steal());
        }

        @Arbiter
        public void after(IIII_Result r) {
            r.r3 = drain(deque);
            r.r4 = stillConsistent(deque);
        }
    }

    @JCStressTest
    @Description("Two elements; the owner pops while two thieves steal (three actors: skipped on fewer "
            + "than 3 CPUs): each element is taken exactly once; the owner can only get the newer one.")
    @Outcome(id = "2, 1, 0, 1", expect = ACCEPTABLE, desc = "pop took the bottom, the first thief the top")
    @Outcome(id = "2, 0, 1, 1", expect = ACCEPTABLE, desc = "pop took the bottom, the second thief the top")
    @Outcome(id = "0, 1, 2, 1", expect = ACCEPTABLE, desc = "the thieves took both; the pop found the deque empty")
    @Outcome(id = "0, 2, 1, 1", expect = ACCEPTABLE, desc = "the thieves took both, in the other order")
    @Outcome(expect = FORBIDDEN, desc = "element lost or duplicated, or deque left inconsistent")
    @State
    public static class TwoElementsPopVsTwoThieves {
        private final WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();

        public TwoElementsPopVsTwoThieves() {
            deque.push(1);
            deque.push(2);
        }

        @Actor
        public void owner(IIII_Result r) {
            r.r1 = value(deque.pop());
        }

        @Actor
        public void thief1(IIII_Result r) {
            r.r2 = value(deque.steal());
        }

        @Actor
        public void thief2(IIII_Result r) {
            r.r3 = value(deque.steal());
        }

        @Arbiter
        public void after(IIII_Result r) {
            r.r4 = drain(deque) == 0 && stillConsistent(deque) == 1 ? 1 : 0;
        }
    }

    /** A mutable element: a thief that gets it must see the field written before the push. */
    static final class Box {
        int value;

        Box(int value) {
            this.value = value;
        }
    }

    @JCStressTest
    @Description("The owner pushes a new object onto an empty deque while a thief steals: the thief "
            + "either sees nothing or the fully written object (release store of bottom, acquire loads).")
    @Outcome(id = "-1, 1", expect = ACCEPTABLE, desc = "the thief came first; the element stayed for the owner")
    @Outcome(id = "42, 0", expect = ACCEPTABLE, desc = "the thief got the element with its contents")
    @Outcome(id = "0, .*", expect = FORBIDDEN, desc = "the thief got the element but not its contents")
    @Outcome(expect = FORBIDDEN, desc = "element lost or duplicated")
    @State
    public static class PushPublishesToThief {
        private final WorkStealingDeque<Box> deque = new WorkStealingDeque<>();

        @Actor
        public void owner() {
            deque.push(new Box(42));
        }

        @Actor
        public void thief(II_Result r) {
            Box box = deque.steal();
            r.r1 = box == null ? -1 : box.value;
        }

        @Arbiter
        public void after(II_Result r) {
            int left = 0;
            while (deque.pop() != null) {
                left++;
            }
            r.r2 = left;
        }
    }

    @JCStressTest
    @Description("A full deque (its initial capacity) grows on the owner's next push while a thief "
            + "steals: the thief gets the oldest element, and every other element survives the copy in order.")
    @Outcome(
            id = "1, 1, 1",
            expect = ACCEPTABLE,
            desc = "the push grew the array; the thief got the oldest element; the rest are intact")
    @Outcome(
            id = "1, 0, 1",
            expect = ACCEPTABLE,
            desc = "the steal came first, so the push fit without growing; the rest are intact")
    @Outcome(expect = FORBIDDEN, desc = "wrong element stolen, or an element lost, duplicated or reordered by growth")
    @State
    public static class GrowthVsSteal {
        private final WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();
        private final int initialCapacity;

        public GrowthVsSteal() {
            initialCapacity = deque.capacity();
            for (int i = 1; i <= initialCapacity; i++) {
                deque.push(i);
            }
        }

        @Actor
        public void owner() {
            deque.push(initialCapacity + 1);
        }

        @Actor
        public void thief(III_Result r) {
            r.r1 = value(deque.steal());
        }

        @Arbiter
        public void after(III_Result r) {
            r.r2 = deque.capacity() > initialCapacity ? 1 : 0;
            boolean intact = true;
            for (int expected = 2; expected <= initialCapacity + 1; expected++) {
                Integer stolen = deque.steal();
                intact &= stolen != null && stolen == expected;
            }
            intact &= deque.steal() == null && deque.pop() == null;
            r.r3 = intact ? 1 : 0;
        }
    }
}
