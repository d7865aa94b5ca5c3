package io.hts.engine.run;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.IntConsumer;

import io.hts.engine.graph.CompiledGraph;
import io.hts.engine.graph.TaskState;

/**
 * The per-run dependency state over a shared {@link CompiledGraph}: each task's count of
 * dependencies not yet done and its {@link TaskState}.
 *
 * <p><b>Ready exactly once.</b> When a task succeeds, each successor's counter is decremented
 * with an atomic {@code getAndAdd}; exactly one decrement observes the value 1, and only that
 * caller makes the successor ready (the seed's diamond: D waits for B and C and runs once, after
 * both). The atomic also publishes the finished task's result to whoever makes the successor
 * ready (release/acquire through the counter).
 *
 * <p><b>State changes</b> that can race (a worker starting a task against a cancellation, a retry
 * timer against a fail-fast sweep) are compare-and-set; every task enters a terminal state
 * exactly once, so the run can count them down to its completion.
 *
 * <p>Two int arrays per run, no allocation per edge, no lock.
 */
final class DependencyManager {

    private static final VarHandle INT_ARRAY = MethodHandles.arrayElementVarHandle(int[].class);

    private static final int CREATED = TaskState.CREATED.ordinal();
    private static final int READY = TaskState.READY.ordinal();
    private static final int RETRYING = TaskState.RETRYING.ordinal();
    private static final int CANCELLED = TaskState.CANCELLED.ordinal();

    private final CompiledGraph graph;
    private final int[] remaining;
    private final int[] states;

    DependencyManager(CompiledGraph graph) {
        this.graph = graph;
        this.remaining = graph.inDegrees();
        this.states = new int[graph.size()];
    }

    /**
     * Counts one finished dependency of task {@code i}.
     *
     * @return whether that was the last one (the caller makes the task ready)
     */
    boolean dependencyDone(int i) {
        return (int) INT_ARRAY.getAndAdd(remaining, i, -1) == 1;
    }

    /** Dependencies of task {@code i} not yet done. */
    int remaining(int i) {
        return (int) INT_ARRAY.getVolatile(remaining, i);
    }

    TaskState state(int i) {
        return TaskState.of((int) INT_ARRAY.getAcquire(states, i));
    }

    boolean is(int i, TaskState state) {
        return (int) INT_ARRAY.getAcquire(states, i) == state.ordinal();
    }

    boolean transition(int i, TaskState from, TaskState to) {
        return INT_ARRAY.compareAndSet(states, i, from.ordinal(), to.ordinal());
    }

    /** Sets a state owned by the caller (a RUNNING task's outcome); publishes what was written before. */
    void set(int i, TaskState to) {
        INT_ARRAY.setRelease(states, i, to.ordinal());
    }

    /** The raw state array, for a finished run's profile. */
    int[] stateOrdinals() {
        return states;
    }

    /**
     * Cancels task {@code i} if it has not started: CREATED, READY or RETRYING to CANCELLED.
     *
     * @return whether this call cancelled it
     */
    boolean cancelIfNotStarted(int i) {
        while (true) {
            int s = (int) INT_ARRAY.getAcquire(states, i);
            if (s != CREATED && s != READY && s != RETRYING) {
                return false;
            }
            if (INT_ARRAY.compareAndSet(states, i, s, CANCELLED)) {
                return true;
            }
        }
    }

    /**
     * Cancels every not-started descendant of task {@code i}. Iterative depth-first walk over
     * successors; a task already cancelled is not walked again, so the walk is O(edges).
     *
     * @param onCancelled called for each task this call cancelled
     * @return how many tasks this call cancelled
     */
    int cancelDescendants(int i, IntConsumer onCancelled) {
        int[] stack = new int[16];
        int top = 0;
        stack[top++] = i;
        int count = 0;
        while (top > 0) {
            int v = stack[--top];
            for (int k = graph.successorStart(v), end = graph.successorEnd(v); k < end; k++) {
                int s = graph.successor(k);
                if (cancelIfNotStarted(s)) {
                    count++;
                    onCancelled.accept(s);
                    if (top == stack.length) {
                        stack = java.util.Arrays.copyOf(stack, stack.length * 2);
                    }
                    stack[top++] = s;
                }
            }
        }
        return count;
    }

    /**
     * Cancels every task that has not started.
     *
     * @param onCancelled called for each task this call cancelled
     * @return how many
     */
    int cancelAllNotStarted(IntConsumer onCancelled) {
        int count = 0;
        for (int i = 0; i < states.length; i++) {
            if (cancelIfNotStarted(i)) {
                count++;
                onCancelled.accept(i);
            }
        }
        return count;
    }
}
