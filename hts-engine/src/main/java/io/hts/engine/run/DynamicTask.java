package io.hts.engine.run;

import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.Worker;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.RunResults;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A task added to a run while it runs ({@link DynamicTasks} adds it): its state word and join
 * counter, its successors, its result, its profile record, its cancellation, and, since it has
 * exactly one attempt, that attempt too: the {@link PoolTask} the workers run and the
 * {@link TaskContext} its body sees. One object per task; nothing of it is in the run's per-task
 * arrays, which the compiled graph sizes.
 *
 * <p><b>Memory ordering.</b> Transitions and the list are compare-and-set or getAndSet (volatile);
 * {@link #state()} reads with volatile semantics. The result is a plain store before the SUCCEEDED
 * transition, published by it to whoever reads the state afterwards: the owner that then makes a
 * successor READY, and through the queue its runner; an adder that finds the seal (written after
 * the transition). A cause is a volatile store, before the transition by the owner of RUNNING,
 * right after it (and before the seal) by a canceller; {@link #error()} waits out that one store.
 * The profile record (ready, start, end, lane) is written by the thread that takes each step,
 * before the step that publishes it (the dispatch, the terminal transition), and read after the
 * run finished, or racily for a snapshot.
 *
 * @param <T> the result type
 */
final class DynamicTask<T extends @Nullable Object> extends DynamicNode implements TaskContext {

    private static final VarHandle CANCEL;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            CANCEL = l.findVarHandle(DynamicTask.class, "cancelRequest", TaskCancelledException.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    final GraphRun run;
    private final DynamicTasks tasks;
    /** Its position in the run's table of dynamic tasks. */
    final int id;

    final String name;
    /** Dropped once the task is final or its body ran (what it captured is not kept with the run). */
    private @Nullable TaskBody<T> body;
    /** The static tasks it depends on (their results are its {@link #input}s). */
    private final int[] staticDependencies;

    /** Stored by the owner of RUNNING before the SUCCEEDED transition, which publishes it. */
    private @Nullable T result;

    private volatile @Nullable Throwable cause;
    /** Its own cancellation, first request kept; accessed through {@code CANCEL} for the compare-and-set. */
    private volatile @Nullable TaskCancelledException cancelRequest;
    /** The run its body waits for in {@link #execute(TaskGraph)}, for cancellers. */
    private volatile @Nullable GraphRun nested;

    // the profile record: System.nanoTime() readings (0: not recorded), the worker
    long readyNanos;
    long startNanos;
    long endNanos;
    int lane = -1;

    DynamicTask(
            GraphRun run,
            DynamicTasks tasks,
            int id,
            String name,
            TaskBody<T> body,
            int[] staticDependencies,
            int count) {
        super(count); // CREATED; published with the task (the table's volatile store)
        this.run = run;
        this.tasks = tasks;
        this.id = id;
        this.name = name;
        this.body = body;
        this.staticDependencies = staticDependencies;
    }

    /** Its own cancellation request, or null. */
    @Nullable
    TaskCancelledException cancelRequested() {
        return cancelRequest;
    }

    @Override
    String describe() {
        return "dynamic task '" + name + "' of run " + run.runId();
    }

    @Override
    Throwable becauseEnded(TaskState s) {
        return tasks.becauseEnded(name, s, error());
    }

    /** Its index in the run's events and failures: after the graph's tasks. */
    int index() {
        return run.topology.size() + id;
    }

    /** The adder registered every dependency: its hold is given back, and the task dispatched when that made it READY. */
    void release() {
        if (dependencyDone()) {
            tasks.dispatch(readied(), null);
        }
    }

    /** Just made READY (by the caller): the ready time and the event; returns the task, to be dispatched. */
    DynamicTask<T> readied() {
        readyNanos = run.recorder.now();
        if (run.recorder.wantsRoutine()) {
            tasks.publish(EventType.TASK_READY, this, -1, null, null);
        }
        return this;
    }

    // ================================================================== the attempt

    @Override
    protected @Nullable PoolTask execute(Worker w) {
        w.flushCountsUnless(run.state);
        Thread.interrupted(); // a flag left by user code that ran on this worker is not for this body
        beginBody(w); // before READY to RUNNING: see InterruptibleBody
        boolean started = false;
        try {
            started = begin(w);
        } finally {
            if (!started) {
                endBody();
            }
        }
        TaskBody<T> b = body;
        body = null; // (a canceller that won drops it too: the same store)
        if (!started) {
            return null;
        }
        settleStart(cancelRequest != null); // cancelled as it started: a canceller may have seen no body yet
        T value = null;
        Throwable error = null;
        try {
            if (b == null) {
                throw new IllegalStateException("dynamic task '" + name + "' started twice; this is a bug in HTS");
            }
            TaskScopes scopes = run.scheduler.scopes;
            value = scopes.isEmpty() ? b.run(this) : scopes.around(run, name, () -> b.run(this));
        } catch (Throwable ex) {
            error = ex;
        }
        endBody();
        endNanos = run.recorder.now();
        if (error == null && cancelRequest == null) {
            return succeeded(value, w);
        }
        attemptFailed(
                error != null
                        ? error
                        : new TaskCancelledException(
                                "dynamic task '" + name + "' of run " + run.runId() + " was cancelled while running"));
        return null;
    }

    /** READY to RUNNING; false when it was cancelled meanwhile, or the run stops (it then ends CANCELLED unstarted). */
    private boolean begin(Worker w) {
        if (!tryStart()) {
            return false; // cancelled while queued: its canceller did its duties
        }
        Throwable stop = run.state.stopCause();
        if (stop != null) {
            endRunning(TaskState.CANCELLED, stop);
            return false;
        }
        lane = w.index();
        startNanos = run.recorder.now();
        if (run.recorder.wantsRoutine()) {
            tasks.publish(EventType.TASK_STARTED, this, lane, null, null);
        }
        return true;
    }

    /**
     * The owner of RUNNING reports success: the result, the event, the successors (the first made
     * READY runs next on {@code w}, the others go on its deque), the count.
     *
     * @return a successor to run next on {@code w}, or null
     */
    @Nullable
    PoolTask succeeded(@Nullable T value, @Nullable Worker w) {
        result = value;
        if (!change(RUNNING, SUCCEEDED)) {
            throw new IllegalStateException(
                    "dynamic task '" + name + "' was not RUNNING when it succeeded; this is a bug in HTS");
        }
        if (run.recorder.wantsRoutine()) {
            tasks.publish(EventType.TASK_SUCCEEDED, this, lane, null, null);
        }
        PoolTask next = null;
        for (Object e = seal(); e != null; e = ((Edge) e).next) {
            DynamicTask<?> s = ((Edge) e).to;
            if (s.dependencyDone()) {
                PoolTask t = s.readied();
                if (w == null) {
                    run.pool.submit(t);
                } else if (next == null) {
                    next = t;
                } else {
                    w.push(t);
                }
            }
        }
        if (w != null) {
            w.countLocally(run.state);
        } else {
            run.state.counted(1);
        }
        return next;
    }

    /** The body threw, or the task was asked to stop: CANCELLED when it was (or the run stops and this is the interrupt), else FAILED. */
    private void attemptFailed(Throwable error) {
        Throwable cancel = cancelRequest;
        Throwable stop = run.state.stopCause();
        if (cancel == null && stop != null && (run.state.cancelRequested() || Attempts.isInterruption(error))) {
            cancel = stop;
        }
        if (cancel != null) {
            endRunning(TaskState.CANCELLED, cancel);
        } else {
            endRunning(TaskState.FAILED, error);
        }
    }

    /**
     * The owner of RUNNING ends the task FAILED or CANCELLED: a failure first stops a fail-fast run
     * (nothing new starts, every task not started is cancelled, static and dynamic), then the cause,
     * the transition, the failure or cancellation recorded, the event, the dependents cancelled, the
     * count.
     */
    void endRunning(TaskState to, Throwable why) {
        TaskCancelledException spread = to == TaskState.FAILED ? tasks.becauseFailed(name, why) : null;
        if (spread != null && run.failureMode() == FailureMode.FAIL_FAST) {
            run.propagation.stop(spread); // sweeps and counts what it cancelled; this task is RUNNING, not swept
        }
        cause = why;
        if (!change(RUNNING, to.ordinal())) {
            throw new IllegalStateException(
                    "dynamic task '" + name + "' was not RUNNING when it ended " + to + "; this is a bug in HTS");
        }
        if (to == TaskState.FAILED) {
            run.state.failed(new TaskFailure(name, index(), why, 1));
            tasks.publish(EventType.TASK_FAILED, this, lane, why, null);
        } else {
            run.state.taskCancelled();
            tasks.publish(EventType.TASK_CANCELLED, this, lane, why, null);
        }
        Throwable descendantsCause = spread != null ? spread : why;
        int[] events = {0};
        int count = 1 + cancelDescendants(descendantsCause, events);
        tasks.summarize(events[0], descendantsCause);
        run.state.counted(count);
    }

    // ================================================================== cancellation

    /**
     * Cancels this task if it has not started (its dependents too), and counts what it cancelled.
     *
     * @return whether this call cancelled it
     */
    boolean cancelNotStarted(Throwable why) {
        if (!tryCancel()) {
            return false;
        }
        int[] events = {0};
        cancelledDuties(why, events);
        int count = 1 + cancelDescendants(why, events);
        tasks.summarize(events[0], why);
        run.state.counted(count);
        return true;
    }

    /** The duties of the winner of this task's CREATED or READY to CANCELLED, but its dependents and its count. */
    void cancelledDuties(Throwable why, int[] events) {
        cause = why; // right after the transition; error() waits it out
        body = null;
        run.state.taskCancelled();
        if (events[0]++ < Propagation.MAX_EVENTS_PER_SWEEP || run.recorder.wantsRoutine()) {
            tasks.publish(EventType.TASK_CANCELLED, this, -1, why, null);
        }
    }

    /**
     * Seals the list of this final task and cancels every dependent that has not started, and
     * theirs: an iterative walk, each task walked only by the call that cancelled it.
     *
     * @return how many this call cancelled (not counted)
     */
    int cancelDescendants(Throwable why, int[] events) {
        DynamicTask<?>[] stack = new DynamicTask<?>[8];
        int top = 0;
        stack[top++] = this;
        int count = 0;
        while (top > 0) {
            DynamicTask<?> v = stack[--top];
            stack[top] = null;
            for (Object e = v.seal(); e != null; e = ((Edge) e).next) {
                DynamicTask<?> s = ((Edge) e).to;
                if (s.tryCancel()) {
                    s.cancelledDuties(why, events);
                    count++;
                    if (top == stack.length) {
                        stack = Arrays.copyOf(stack, top * 2);
                    }
                    stack[top++] = s;
                }
            }
        }
        return count;
    }

    /**
     * Cancels this task and its dependents: at once when it has not started, when its body returns
     * when it runs (its body sees {@code ctx.isCancelled()} and an interrupt).
     *
     * @return whether the task was not final at the call
     */
    boolean cancel() {
        if (state().isTerminal()) {
            return false;
        }
        CANCEL.compareAndSet(
                this,
                null,
                new TaskCancelledException("dynamic task '" + name + "' of run " + run.runId() + " was cancelled"));
        TaskCancelledException why = cancelRequest;
        if (why != null && cancelNotStarted(why)) {
            return true;
        }
        boolean live = !state().isTerminal(); // looked at before the interrupt can end it
        interrupt();
        return live;
    }

    @Override
    void onInterrupt() {
        GraphRun n = nested;
        if (n != null) {
            n.cancel();
        }
    }

    // ================================================================== outcome

    /** Why a FAILED or CANCELLED task is so, else null; waits out a canceller's one store after its transition. */
    @Nullable
    Throwable error() {
        TaskState s = state();
        if (s != TaskState.FAILED && s != TaskState.CANCELLED) {
            return null;
        }
        for (int spins = 0; ; spins++) {
            Throwable c = cause;
            if (c != null) {
                return c;
            }
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /**
     * Its result, once it succeeded; a dependent's body reads its dependencies' results so.
     *
     * @throws IllegalStateException when it has not succeeded (naming its state and cause)
     */
    T result() {
        TaskState s = state();
        if (s != TaskState.SUCCEEDED) {
            Throwable c = error();
            throw new IllegalStateException(
                    "dynamic task '" + name + "' of run " + run.runId() + " has no result: it is " + s
                            + (c != null ? " (" + TaskFailure.describe(c) + ")" : ""),
                    c);
        }
        return result;
    }

    // ================================================================== TaskContext

    @Override
    public String taskName() {
        return name;
    }

    @Override
    public String graphName() {
        return run.topology.name();
    }

    @Override
    public long runId() {
        return run.runId();
    }

    @Override
    public int attempt() {
        return 1;
    }

    @Override
    public Device device() {
        return Device.CPU;
    }

    @Override
    public int groupIndex() {
        return -1;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <U extends @Nullable Object> U input(Task<U> upstream) {
        if (upstream.graph() != run.graph.graph() || !dependsOnStatic(upstream.index())) {
            throw new IllegalArgumentException("dynamic task '" + name + "' reads the result of " + upstream
                    + ", which is not one of the static tasks it depends on; a dynamic dependency's result is"
                    + " read from its handle");
        }
        return (U) run.resultOf(upstream.index());
    }

    @Override
    public <U extends @Nullable Object> List<U> inputs(TaskGroup<U> upstream) {
        List<U> out = new ArrayList<>(upstream.size());
        for (Task<U> m : upstream.members()) {
            out.add(input(m));
        }
        return out;
    }

    private boolean dependsOnStatic(int i) {
        for (int d : staticDependencies) {
            if (d == i) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean isCancelled() {
        return cancelRequest != null || run.state.stopCause() != null;
    }

    /**
     * Runs a graph and waits, the worker helping meanwhile; cancelling this task (or its run)
     * cancels that run. The same Dekker pair as {@link TaskExecution#waitFor}: this body publishes
     * the nested run, then reads the cancel requests; a canceller records its request, then reads
     * {@code nested} ({@link #onInterrupt()}).
     */
    @Override
    public RunResults execute(TaskGraph graph) {
        GraphRun n = run.scheduler.submit(graph);
        nested = n;
        try {
            if (isCancelled()) {
                n.cancel();
            }
            return n.await();
        } finally {
            nested = null;
        }
    }

    @Override
    public String toString() {
        return "dynamic task '" + name + "' (" + state() + ") of run " + run.runId();
    }
}
