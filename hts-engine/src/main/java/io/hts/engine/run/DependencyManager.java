package io.hts.engine.run;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.IntConsumer;

import io.hts.engine.graph.CompiledGraph;
import io.hts.engine.graph.TaskState;

/**
 * The per-run dependency state over a shared {@link CompiledGraph}: for each task, in one int,
 * its {@link TaskState} (top bits) and its count of dependencies not yet done (low
 * {@value #COUNT_BITS} bits).
 *
 * <p><b>Ready exactly once.</b> When a task succeeds, each successor's word is decremented with a
 * CAS; the decrement that takes the count from 1 to 0 also moves the state from CREATED to READY
 * in the same atomic step, so exactly one finishing predecessor makes the successor ready (the
 * seed's diamond: D waits for B and C and runs once, after both), with one atomic operation per
 * edge and none extra for readiness. The CAS also publishes the predecessor's result to whoever
 * makes the successor ready (release/acquire on the word).
 *
 * <p><b>State changes</b> that can race (a worker starting a task against a cancellation, a retry
 * timer against a fail-fast sweep) are compare-and-set on the same word; every task enters a
 * terminal state exactly once, so the run can count them down to its completion.
 *
 * <p>One int per task per run, laid out by {@link CompiledGraph#slot(int)} so that tasks likely to
 * run at the same time on different workers do not share a cache line. No allocation per edge,
 * no lock.
 */
final class DependencyManager {

    private static final VarHandle INT_ARRAY = MethodHandles.arrayElementVarHandle(int[].class);

    static final int COUNT_BITS = 28;
    private static final int COUNT_MASK = (1 << COUNT_BITS) - 1;

    private static final int CREATED = TaskState.CREATED.ordinal();
    private static final int READY = TaskState.READY.ordinal();
    private static final int RETRYING = TaskState.RETRYING.ordinal();
    private static final int CANCELLED = TaskState.CANCELLED.ordinal();

    private final CompiledGraph graph;
    private final int[] words;

    DependencyManager(CompiledGraph graph) {
        this.graph = graph;
        this.words = new int[graph.slots()];
        for (int i = 0, n = graph.size(); i < n; i++) {
            int in = graph.inDegree(i);
            if (in > COUNT_MASK) {
                throw new IllegalArgumentException("task '" + graph.name(i) + "' has " + in
                        + " dependencies; at most " + COUNT_MASK + " are supported (join them through barriers)");
            }
            words[graph.slot(i)] = in;
        }
    }

    private static int word(int state, int count) {
        return (state << COUNT_BITS) | count;
    }

    /**
     * Counts one finished dependency of task {@code i}; the last one also makes it READY.
     *
     * @return whether this call made the task READY (the caller dispatches it)
     */
    boolean dependencyDone(int i) {
        int p = graph.slot(i);
        while (true) {
            int v = (int) INT_ARRAY.getVolatile(words, p);
            int count = v & COUNT_MASK;
            if (count == 0) {
                return false; // already ended with its count cleared (a device-ordered task): nothing to count
            }
            boolean last = count == 1 && (v >>> COUNT_BITS) == CREATED;
            int next = last ? word(READY, 0) : v - 1;
            if (INT_ARRAY.compareAndSet(words, p, v, next)) {
                return last;
            }
        }
    }

    /** Dependencies of task {@code i} not yet done. */
    int remaining(int i) {
        return (int) INT_ARRAY.getVolatile(words, graph.slot(i)) & COUNT_MASK;
    }

    TaskState state(int i) {
        return TaskState.of((int) INT_ARRAY.getAcquire(words, graph.slot(i)) >>> COUNT_BITS);
    }

    boolean is(int i, TaskState state) {
        return ((int) INT_ARRAY.getAcquire(words, graph.slot(i)) >>> COUNT_BITS) == state.ordinal();
    }

    boolean transition(int i, TaskState from, TaskState to) {
        int p = graph.slot(i);
        while (true) {
            int v = (int) INT_ARRAY.getVolatile(words, p);
            if ((v >>> COUNT_BITS) != from.ordinal()) {
                return false;
            }
            if (INT_ARRAY.compareAndSet(words, p, v, word(to.ordinal(), v & COUNT_MASK))) {
                return true;
            }
        }
    }

    /** Sets the state of a task the caller owns (RUNNING, no dependencies left); publishes prior writes. */
    void set(int i, TaskState to) {
        INT_ARRAY.setRelease(words, graph.slot(i), word(to.ordinal(), 0));
    }

    /**
     * Cancels task {@code i} if it has not started: CREATED, READY or RETRYING to CANCELLED.
     *
     * @return whether this call cancelled it
     */
    boolean cancelIfNotStarted(int i) {
        int p = graph.slot(i);
        while (true) {
            int v = (int) INT_ARRAY.getVolatile(words, p);
            int s = v >>> COUNT_BITS;
            if (s != CREATED && s != READY && s != RETRYING) {
                return false;
            }
            if (INT_ARRAY.compareAndSet(words, p, v, word(CANCELLED, v & COUNT_MASK))) {
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
        for (int i = 0, n = graph.size(); i < n; i++) {
            if (cancelIfNotStarted(i)) {
                count++;
                onCancelled.accept(i);
            }
        }
        return count;
    }
}
