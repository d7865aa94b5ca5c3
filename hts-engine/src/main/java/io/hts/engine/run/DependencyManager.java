package io.hts.engine.run;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskState;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.IntConsumer;

/**
 * The per-run state of every task over a shared {@link GraphTopology}: in one int per task, its
 * {@link TaskState} (top bits) and its count of dependencies not yet done (low {@value #COUNT_BITS}
 * bits), and the only code that changes them.
 *
 * <h2>The transition rule</h2>
 *
 * <pre>
 * CREATED --(last dependency done | root | device-ordered early start)--&gt; READY
 * READY --tryStart--&gt; RUNNING --tryEnd--&gt; SUCCEEDED | FAILED | CANCELLED
 * CREATED --dependencyDoneAndStart (its only dependency done, its attempt starting)--&gt; RUNNING
 * RUNNING --tryRetry--&gt; RETRYING --tryRequeue--&gt; READY
 * CREATED | READY | RETRYING --tryCancel--&gt; CANCELLED
 * READY --tryFailUnstarted--&gt; FAILED                  (no device could take it)
 * </pre>
 *
 * <p><b>Invariants.</b> (1) Every change of a task's state is one compare-and-set on its word from
 * an expected state; there is no blind write anywhere. (2) The terminal states SUCCEEDED, FAILED
 * and CANCELLED are absorbing: no method moves a task out of one, so each task enters exactly one
 * terminal state exactly once, and the thread whose compare-and-set did it is the one owner of
 * that transition: it alone counts the task, publishes its event, propagates to successors and
 * releases what it holds (see {@link Propagation}). (3) CREATED to READY happens at most once: by
 * the {@link #dependencyDone} that takes the count from 1 to 0 (the seed's diamond: D waits for B
 * and C and runs once, after both), or by {@link #tryReady} for a root or a device-ordered task;
 * the count is never reset, so a late {@code dependencyDone} only decrements; a task with one
 * dependency may instead go from CREATED straight to RUNNING in {@link #dependencyDoneAndStart},
 * which is both that count and the start. (4) RUNNING belongs
 * to the attempt that won {@link #tryStart} (or {@link #dependencyDoneAndStart}): only the owner of that attempt's outcome (its body's
 * return, or its time-out; see {@link TaskExecution}) calls {@link #tryEnd} or {@link #tryRetry};
 * cancellers never move a RUNNING task, they ask it to stop.
 *
 * <p><b>Memory ordering.</b> Every transition is a compare-and-set (volatile semantics), so what a
 * winner wrote before it (a result, a cause) is visible to any thread that reads the new state;
 * {@link #state} reads with volatile semantics too, so a write of another variable followed by a
 * read of a state, and a transition followed by a read of that variable, form a Dekker pair (the
 * watchers of {@code whenDone} rely on it).
 *
 * <p>One int per task per run, laid out by {@link GraphTopology#slot(int)} so that tasks likely to
 * run at the same time on different workers do not share a cache line. No allocation per edge, no
 * lock; one atomic operation per edge and none extra for readiness.
 */
final class DependencyManager {

    private static final VarHandle INT_ARRAY = MethodHandles.arrayElementVarHandle(int[].class);

    static final int COUNT_BITS = 28;
    private static final int COUNT_MASK = (1 << COUNT_BITS) - 1;

    private static final int CREATED = TaskState.CREATED.ordinal();
    private static final int READY = TaskState.READY.ordinal();
    private static final int RUNNING = TaskState.RUNNING.ordinal();
    private static final int RETRYING = TaskState.RETRYING.ordinal();
    private static final int SUCCEEDED = TaskState.SUCCEEDED.ordinal();
    private static final int FAILED = TaskState.FAILED.ordinal();
    private static final int CANCELLED = TaskState.CANCELLED.ordinal();

    private final GraphTopology topology;
    private final int[] words;

    /** The words of a run of {@code topology} at its start (made afresh: for a one-off run, or a test). */
    DependencyManager(GraphTopology topology) {
        this(topology, initialWords(topology));
    }

    /**
     * A run's words at its start, a copy of {@code initial} (from {@link #initialWords}, made once
     * per graph): one block copy per run instead of a pass over the topology.
     */
    DependencyManager(GraphTopology topology, int[] initial) {
        this.topology = topology;
        this.words = initial.clone();
    }

    /**
     * Every task's word before its run starts (CREATED, its in-degree), laid out by {@link
     * GraphTopology#slot(int)}: made once per graph, and copied by each run.
     *
     * @throws IllegalArgumentException naming a task with more dependencies than a word counts
     */
    static int[] initialWords(GraphTopology topology) {
        int[] words = new int[topology.slots()];
        for (int i = 0, n = topology.size(); i < n; i++) {
            int in = topology.inDegree(i);
            if (in > COUNT_MASK) {
                throw new IllegalArgumentException("task '" + topology.name(i) + "' has " + in
                        + " dependencies; at most " + COUNT_MASK + " are supported (join them through barriers)");
            }
            words[topology.slot(i)] = word(CREATED, in);
        }
        return words;
    }

    private static int word(int state, int count) {
        return (state << COUNT_BITS) | count;
    }

    /**
     * Counts one succeeded dependency of task {@code i}; the last one also makes it READY, in the
     * same atomic step.
     *
     * @return whether this call made the task READY (the caller dispatches it)
     */
    boolean dependencyDone(int i) {
        return countDown(i, READY);
    }

    /**
     * Counts the one dependency of task {@code i} and starts it in the same atomic step: CREATED
     * with one dependency left to RUNNING. For an attempt made before its task's only dependency
     * was counted (the continuation of the worker that ran that dependency, see
     * {@link Propagation#succeeded}); a task cancelled meanwhile only has its count taken down.
     *
     * @return whether this call made the task RUNNING (the attempt owns it)
     */
    boolean dependencyDoneAndStart(int i) {
        return countDown(i, RUNNING);
    }

    /** One dependency of task {@code i} done; the last one moves it from CREATED to {@code to} in the same step. */
    private boolean countDown(int i, int to) {
        int p = topology.slot(i);
        while (true) {
            int v = (int) INT_ARRAY.getVolatile(words, p);
            int count = v & COUNT_MASK;
            if (count == 0) {
                throw new IllegalStateException(
                        "task '" + topology.name(i) + "' was told of more finished" + " dependencies than it has");
            }
            boolean last = count == 1 && (v >>> COUNT_BITS) == CREATED;
            if (INT_ARRAY.compareAndSet(words, p, v, last ? word(to, 0) : v - 1)) {
                return last;
            }
        }
    }

    /**
     * CREATED to READY without counting: a root, or a device-ordered task whose predecessors' work
     * is enqueued on the device (it is ordered after that work there), whose later
     * {@link #dependencyDone} calls then only count down.
     */
    boolean tryReady(int i) {
        return change(i, CREATED, READY);
    }

    /** READY to RUNNING: the attempt that wins owns the RUNNING state. */
    boolean tryStart(int i) {
        return change(i, READY, RUNNING);
    }

    /** RUNNING to RETRYING, by the owner of the running attempt's outcome. */
    boolean tryRetry(int i) {
        return change(i, RUNNING, RETRYING);
    }

    /** RETRYING to READY, when the backoff has passed. */
    boolean tryRequeue(int i) {
        return change(i, RETRYING, READY);
    }

    /**
     * RUNNING to a terminal state, by the owner of the running attempt's outcome.
     *
     * @param to SUCCEEDED, FAILED or CANCELLED
     * @return whether this call ended the task (the caller is the owner of the end)
     */
    boolean tryEnd(int i, TaskState to) {
        if (!to.isTerminal()) {
            throw new IllegalArgumentException(to + " is not a final state");
        }
        return change(i, RUNNING, to.ordinal());
    }

    /** READY to FAILED: the task cannot be placed on any device and never started. */
    boolean tryFailUnstarted(int i) {
        return change(i, READY, FAILED);
    }

    /**
     * Cancels task {@code i} if it has not started: CREATED, READY or RETRYING to CANCELLED.
     *
     * @return whether this call cancelled it (the caller is the owner of the end)
     */
    boolean tryCancel(int i) {
        int p = topology.slot(i);
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

    private boolean change(int i, int from, int to) {
        int p = topology.slot(i);
        while (true) {
            int v = (int) INT_ARRAY.getVolatile(words, p);
            if ((v >>> COUNT_BITS) != from) {
                return false;
            }
            if (INT_ARRAY.compareAndSet(words, p, v, word(to, v & COUNT_MASK))) {
                return true;
            }
        }
    }

    /** Dependencies of task {@code i} not yet done. */
    int remaining(int i) {
        return (int) INT_ARRAY.getVolatile(words, topology.slot(i)) & COUNT_MASK;
    }

    TaskState state(int i) {
        return TaskState.of((int) INT_ARRAY.getVolatile(words, topology.slot(i)) >>> COUNT_BITS);
    }

    /**
     * The state a user is shown ({@code states()}, diagnoses, profiles): a CREATED task whose
     * dependencies all succeeded is READY. Its attempt is queued; its last count is on its way,
     * or is taken as the attempt starts ({@link #dependencyDoneAndStart}), which may be after a
     * sibling's whole body on the same worker. Not for the engine's own decisions: those read
     * {@link #state}.
     */
    TaskState observed(int i) {
        return observed(words, topology, i);
    }

    private static TaskState observed(int[] words, GraphTopology t, int i) {
        TaskState s = TaskState.of((int) INT_ARRAY.getVolatile(words, t.slot(i)) >>> COUNT_BITS);
        if (s != TaskState.CREATED) {
            return s;
        }
        // a root not made ready yet (a root seeder is on its way to it) has nothing left to wait for
        // either: it is queued, as the caller's roots of a smaller graph are
        for (int k = t.predecessorStart(i), end = t.predecessorEnd(i); k < end; k++) {
            if ((int) INT_ARRAY.getVolatile(words, t.slot(t.predecessor(k))) >>> COUNT_BITS != SUCCEEDED) {
                return s;
            }
        }
        return TaskState.READY;
    }

    boolean is(int i, TaskState state) {
        return ((int) INT_ARRAY.getVolatile(words, topology.slot(i)) >>> COUNT_BITS) == state.ordinal();
    }

    /**
     * A view of the states for a profile kept after the run: it holds the words and the topology,
     * not this manager's graph.
     */
    java.util.function.IntFunction<TaskState> stateView() {
        int[] w = words;
        GraphTopology t = topology;
        return i -> observed(w, t, i);
    }

    /**
     * Cancels every not-started descendant of task {@code i}. Iterative depth-first walk over
     * successors; a task is walked only by the call that cancelled it, so all walks together are
     * O(edges).
     *
     * @param onCancelled called for each task this call cancelled, right after its transition
     * @return how many tasks this call cancelled
     */
    int cancelDescendants(int i, IntConsumer onCancelled) {
        int[] stack = new int[16];
        int top = 0;
        stack[top++] = i;
        int count = 0;
        while (top > 0) {
            int v = stack[--top];
            for (int k = topology.successorStart(v), end = topology.successorEnd(v); k < end; k++) {
                int s = topology.successor(k);
                if (tryCancel(s)) {
                    count++;
                    onCancelled.accept(s);
                    if (top == stack.length) {
                        stack = Arrays.copyOf(stack, stack.length * 2);
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
     * @param onCancelled called for each task this call cancelled, right after its transition
     * @return how many
     */
    int cancelAllNotStarted(IntConsumer onCancelled) {
        int count = 0;
        for (int i = 0, n = topology.size(); i < n; i++) {
            if (tryCancel(i)) {
                count++;
                onCancelled.accept(i);
            }
        }
        return count;
    }
}
