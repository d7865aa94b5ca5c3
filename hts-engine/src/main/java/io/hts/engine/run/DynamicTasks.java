package io.hts.engine.run;

import io.hts.engine.exec.internal.Worker;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskTiming;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The tasks added to one run while it runs, and the kernel's entry point for adding them: the
 * base of condition tasks, subflows a running task spawns, dependent async tasks and pipelines. Not
 * public API: {@link #spawn} takes the {@link TaskContext} of a running body of the run (a static
 * task's or a dynamic task's), {@link #add} is for kernel code.
 *
 * <p>A dynamic task ({@link DynamicTask}) has a CPU body, a name (not necessarily unique), and
 * dependencies given when it is added: on dynamic tasks of the same run, and on the run's static
 * tasks by index. Its dependents come later, by naming it. It has its own state word and join
 * counter (the state machine of {@link DependencyManager}), result, profile record and
 * cancellation; it runs on the scheduler's pool as an ordinary pool task (a dynamic task made
 * ready by the end of its last dependency on a worker runs next on that worker). It has one
 * attempt: no retries and no time limits yet; no GPU body, no resources, no priority. Its events
 * are the static tasks' (TASK_READY, _STARTED, _SUCCEEDED when wanted; _FAILED, _CANCELLED), with
 * its name and an index after the graph's tasks ({@link DynamicTask#index()}).
 *
 * <h2>Invariants</h2>
 *
 * <p><b>The run's count.</b> An adder counts the new task in the run's pending count
 * ({@link RunState#reserve()}) before anyone can see it (the table, a dependency's list), and its
 * end contributes one as any task's does (the winner of its terminal transition; see
 * {@link RunState}). So the run never finishes while a dynamic task is not final. The reservation
 * is a compare-and-set that refuses a count of zero: the run has finished, and the add throws an
 * {@link IllegalStateException} naming the run and the task. An adder that holds a running task
 * of the run (the body calling {@link #spawn}) finds the count above zero, since its own task is
 * not counted yet; {@link #spawn} checks that the holder runs and refuses otherwise.
 *
 * <p><b>Stop against add (a Dekker pair).</b> A run that stops (cancelled, or a fail-fast
 * failure) refuses adds: one that finds the stop cause set throws (a
 * {@link TaskCancelledException}, which is an {@code IllegalStateException}). The stopper sets the
 * cause (compare-and-set), then sweeps the table ({@link #cancelAllNotStarted}); an adder writes
 * the new task in the table (volatile), then reads the cause (volatile). So one of them sees the
 * other: the sweep cancels the task, or the adder cancels it itself at once; both may try, and one
 * {@code tryCancel} wins.
 *
 * <p><b>Edges.</b> An edge between dynamic tasks is decided by one compare-and-set on the
 * dependency's successor list against its sealing ({@link DynamicTask}). An edge to a static task
 * goes on that task's list in {@link StaticDependents} (one slot per static task, made with the
 * first such edge); the static task's end reaches it through {@link TaskWatchers#ended}, which
 * every end of a static task calls, and only while its volatile flag is set: an adder pushes its
 * edge, sets the flag ({@link TaskWatchers#dependents}), then reads the static task's state; the
 * ender changes the state, then reads the flag: one of them sees the other (the watchers' Dekker
 * pair), and whichever takes the slot's list with {@code getAndSet(SEALED)} decides its edges, once.
 * A static run that adds nothing pays nothing for this: the flag is the one {@code whenDone}
 * already reads.
 *
 * <p><b>Where the rest of the kernel looks.</b> {@code GraphRun.dynamic} is null until the first
 * add. It is read only where a dynamic task can matter: the stop's sweep
 * ({@link Propagation}), the run's cancel (interrupting running dynamic bodies), and the failed
 * run's exception (naming cancelled dynamic tasks); never on a static task's success path.
 *
 * <p><b>Memory ordering.</b> {@code GraphRun.dynamic} and {@code staticDependents} are set once by
 * compare-and-set and read volatile; the table's ({@link DynamicTable}) and a task's own are
 * described there.
 */
final class DynamicTasks {

    private static final VarHandle DYNAMIC;
    private static final VarHandle STATIC_DEPENDENTS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            DYNAMIC = l.findVarHandle(GraphRun.class, "dynamic", DynamicTasks.class);
            STATIC_DEPENDENTS = l.findVarHandle(DynamicTasks.class, "staticDependents", StaticDependents.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final GraphRun run;
    private final DynamicTable<DynamicTask<?>> table = new DynamicTable<>();
    /** The edges from static tasks to dynamic ones; made with the first such edge. */
    private volatile @Nullable StaticDependents staticDependents;

    private DynamicTasks(GraphRun run) {
        this.run = run;
    }

    /** The dynamic tasks of {@code run}, made on first use. */
    static DynamicTasks of(GraphRun run) {
        DynamicTasks d = run.dynamic;
        if (d != null) {
            return d;
        }
        DynamicTasks made = new DynamicTasks(run);
        DynamicTasks won = (DynamicTasks) DYNAMIC.compareAndExchange(run, null, made);
        return won != null ? won : made;
    }

    // ================================================================== the entry point

    /**
     * Adds a task to the run of the running body {@code ctx} belongs to.
     *
     * @param ctx the context of a body of the run, running now
     * @param name the new task's name
     * @param body its CPU body
     * @param after the dynamic tasks of the same run it depends on
     * @return the new task: CREATED, READY or later (or CANCELLED at once, when a dependency has
     *     failed or was cancelled, or the run stopped as it was added)
     * @throws IllegalStateException when the run has finished or stops (a
     *     {@link TaskCancelledException} then), or {@code ctx}'s task does not run
     * @throws IllegalArgumentException when a dependency is of another run
     */
    static <T extends @Nullable Object> DynamicTask<T> spawn(
            TaskContext ctx, String name, TaskBody<T> body, DynamicTask<?>... after) {
        return spawn(ctx, name, body, List.of(after));
    }

    /**
     * Adds a task to the run of the running body {@code ctx} belongs to; {@link #spawn(TaskContext,
     * String, TaskBody, DynamicTask[])} with static dependencies too.
     *
     * @param afterStatic the indices of the static tasks of the run it depends on
     */
    static <T extends @Nullable Object> DynamicTask<T> spawn(
            TaskContext ctx, String name, TaskBody<T> body, List<? extends DynamicTask<?>> after, int... afterStatic) {
        GraphRun run;
        if (ctx instanceof TaskExecution e) {
            run = e.run;
        } else if (ctx instanceof DynamicTask<?> d) {
            run = d.run;
        } else {
            throw new IllegalArgumentException(
                    "task '" + name + "' is added through " + ctx + ", which is not the context of a body HTS runs");
        }
        return of(run).add(ctx, name, body, after, afterStatic);
    }

    /**
     * Adds a task to this run (see the class comment).
     *
     * @param holder the context of the running body that adds it; null for kernel code, which then
     *     must hold an unfinished task of the run itself (a finished run is refused either way)
     */
    <T extends @Nullable Object> DynamicTask<T> add(
            @Nullable TaskContext holder,
            String name,
            TaskBody<T> body,
            List<? extends DynamicTask<?>> after,
            int... afterStatic) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(body, "body");
        for (DynamicTask<?> d : after) {
            if (Objects.requireNonNull(d, "a dependency").run != run) {
                throw new IllegalArgumentException("task '" + name + "' of " + describeRun() + " cannot depend on " + d
                        + ": a dynamic task depends on tasks of its own run only");
            }
        }
        int n = run.topology.size();
        for (int s : afterStatic) {
            if (s < 0 || s >= n) {
                throw new IllegalArgumentException("task '" + name + "' of " + describeRun()
                        + " cannot depend on static" + " task " + s + ": the graph has tasks 0 to " + (n - 1));
            }
        }
        if (afterStatic.length > 0 && run.lifetimes != null) {
            throw new IllegalArgumentException("task '" + name + "' cannot depend on static tasks of graph '"
                    + run.topology.name() + "': its results may be device buffers, released once their static"
                    + " readers are done, and a dynamic reader is not counted among them (not supported yet)");
        }
        long count = 1L + after.size() + afterStatic.length;
        if (count > DynamicNode.COUNT_MASK) {
            throw new IllegalArgumentException("task '" + name + "' has " + (count - 1) + " dependencies; at most "
                    + (DynamicNode.COUNT_MASK - 1) + " are supported (join them through intermediate tasks)");
        }
        refuseFinished(name);
        if (holder != null) {
            refuseNotRunning(holder, name);
        }
        refuseStopping(name);
        DynamicTask<T> t = newTask(name, body, afterStatic.clone(), (int) count);
        Throwable stop = run.state.stopCause(); // after the table's volatile store: the Dekker pair with the sweep
        if (stop != null) {
            t.cancelNotStarted(stop); // unless the sweep did
        } else {
            for (int k = 0; k < afterStatic.length && t.state() == TaskState.CREATED; k++) {
                dependOnStatic(afterStatic[k], t);
            }
            for (int k = 0; k < after.size() && t.state() == TaskState.CREATED; k++) {
                after.get(k).addDependent(t);
            }
        }
        t.release();
        return t;
    }

    /**
     * Counts and publishes a new task, CREATED, waiting for {@code count} - 1 dependencies and its
     * adder's hold; the adder then registers them and releases the hold ({@link DynamicTask#release()}).
     *
     * @throws IllegalStateException when the run has finished, or the table is full
     */
    <T extends @Nullable Object> DynamicTask<T> newTask(
            String name, TaskBody<T> body, int[] staticDependencies, int count) {
        if (!run.state.reserve()) {
            refuseFinished(name);
            throw new IllegalStateException(describeRun() + " has " + run.state.pending()
                    + " unfinished tasks, the most a run can count; task '" + name + "' was not added");
        }
        int id = table.take();
        if (id < 0) {
            run.state.counted(1); // the reservation given back
            throw new IllegalStateException(describeRun() + " has " + DynamicTable.CAPACITY
                    + " dynamic tasks, the most it can hold; task '" + name + "' was not added");
        }
        DynamicTask<T> t = new DynamicTask<>(run, this, id, name, body, staticDependencies, count);
        table.set(id, t);
        return t;
    }

    private void refuseFinished(String name) {
        if (run.state.pending() <= 0 || run.isDone()) {
            RunStatus status = run.status();
            throw new IllegalStateException(describeRun() + " has finished (" + (status.isDone() ? status : "finishing")
                    + "); task '" + name + "' cannot be added to it");
        }
    }

    private void refuseNotRunning(TaskContext holder, String name) {
        TaskState s;
        boolean live;
        TaskCancelledException cancelled;
        if (holder instanceof TaskExecution e && e.run == run) {
            s = run.deps.state(e.index);
            // RUNNING is the task's: the attempt must be its latest (a failed one's context, kept, is not)
            live = s == TaskState.RUNNING && !e.timedOut() && run.recorder.attemptsOf(e.index) == e.attempt;
            cancelled = run.propagation.taskCancelRequest(e.index);
        } else if (holder instanceof DynamicTask<?> d && d.run == run) {
            s = d.state();
            live = s == TaskState.RUNNING;
            cancelled = d.cancelRequested();
        } else {
            throw new IllegalArgumentException("task '" + name + "' is added to " + describeRun() + " through " + holder
                    + ", which is not a task of that run");
        }
        if (!live) {
            throw new IllegalStateException(
                    "task '" + holder.taskName() + "' of " + describeRun() + " is not running (it is "
                            + s + (s == TaskState.RUNNING ? ", timed out" : "")
                            + "): only a running task adds tasks to its run;"
                            + " task '" + name + "' was not added");
        }
        if (cancelled != null) {
            // asked to stop while it runs: it starts no new work, as a stopping run does not
            throw new TaskCancelledException(
                    "task '" + name + "' was not added: task '" + holder.taskName() + "' of " + describeRun()
                            + " was cancelled while it ran",
                    cancelled);
        }
    }

    private void refuseStopping(String name) {
        Throwable stop = run.state.stopCause();
        if (stop != null) {
            throw new TaskCancelledException(
                    describeRun() + " is stopping (" + TaskFailure.describe(stop) + "); task '" + name
                            + "' was not added",
                    stop);
        }
    }

    private String describeRun() {
        return "run " + run.runId() + " of graph '" + run.topology.name() + "'";
    }

    // ================================================================== static dependencies

    /** Makes {@code t} wait for static task {@code s} (see the class comment: edges, and {@link StaticDependents}). */
    void dependOnStatic(int s, DynamicTask<?> t) {
        StaticDependents d = staticDependents;
        if (d == null) {
            STATIC_DEPENDENTS.compareAndSet(this, null, new StaticDependents(run, this));
            d = Objects.requireNonNull(staticDependents);
        }
        d.add(s, t);
    }

    /** Static task {@code s} is final: its dynamic dependents, if any, are decided (from {@link TaskWatchers#ended}). */
    void staticEnded(int s) {
        StaticDependents d = staticDependents;
        if (d != null) {
            d.ended(s);
        }
    }

    // ================================================================== dispatch, stop, events

    /** Queues a READY task: on this worker's deque when the caller is a worker of the run's pool, else the pool's queue. */
    void dispatch(DynamicTask<?> t, @Nullable Worker w) {
        Worker here = w;
        if (here == null && Thread.currentThread() instanceof Worker cw && cw.pool() == run.pool) {
            here = cw;
        }
        if (here != null) {
            here.push(t);
        } else {
            run.pool.submit(t);
        }
    }

    /**
     * The run stops: every dynamic task that has not started is cancelled with {@code cause}, and
     * its dependents; called by the stopper after it set the stop cause ({@link Propagation}).
     *
     * @return how many this call cancelled, for its caller to count
     */
    int cancelAllNotStarted(Throwable cause) {
        int[] events = {0};
        int count = 0;
        for (int p = 0, n = table.size(); p < n; p++) {
            DynamicTask<?> t = table.get(p);
            if (t != null && t.tryCancel()) { // null: its adder has not written it; it reads the cause after
                t.cancelledDuties(cause, events);
                count += 1 + t.cancelDescendants(cause, events);
            }
        }
        summarize(events[0], cause);
        return count;
    }

    /** The run was cancelled: the running dynamic bodies are interrupted (and the runs they wait for cancelled). */
    void interruptRunning() {
        run.pool.forEachRunning(t -> {
            if (t instanceof DynamicTask<?> d && d.run == run) {
                d.interrupt();
            }
        });
    }

    void publish(
            EventType type, @Nullable DynamicTask<?> t, int lane, @Nullable Throwable error, @Nullable String detail) {
        run.recorder.publish(
                type,
                t != null ? t.name : null,
                t != null ? t.index() : -1,
                lane >= 0 ? Device.CPU : null,
                lane,
                t != null ? 1 : 0,
                error,
                null,
                detail);
    }

    void summarize(int cancelled, Throwable cause) {
        Propagation.summarize(run.recorder, cancelled, cause, "dynamic tasks");
    }

    TaskCancelledException becauseFailed(String name, Throwable failure) {
        return Propagation.becauseFailed(name, failure);
    }

    /** The cause of a dependent of a task that ended {@code state} (FAILED or CANCELLED) with {@code cause}. */
    Throwable becauseEnded(String name, TaskState state, @Nullable Throwable cause) {
        if (state == TaskState.FAILED) {
            return becauseFailed(name, cause != null ? cause : new IllegalStateException("task '" + name + "' failed"));
        }
        return cause != null
                ? cause
                : new TaskCancelledException("cancelled because task '" + name + "' was cancelled");
    }

    // ================================================================== reading

    /** How many dynamic tasks were added (a few of the last may not be readable yet while adds go on). */
    int size() {
        return table.size();
    }

    /** The dynamic task at {@code id}, or null while its adder is writing it. */
    @Nullable
    DynamicTask<?> task(int id) {
        return table.get(id);
    }

    /** Adds the names of the cancelled dynamic tasks (for the failed run's exception). */
    void cancelledNames(List<String> out) {
        for (int p = 0, n = table.size(); p < n; p++) {
            DynamicTask<?> t = table.get(p);
            if (t != null && t.state() == TaskState.CANCELLED) {
                out.add(t.name);
            }
        }
    }

    /**
     * The profile records of the dynamic tasks, as the profile's timings (nanoseconds from the run's
     * submission; -1 for a start or end not recorded, as with profiling off). Read after the run
     * finished they are final; before, a snapshot whose entries may lag their states.
     */
    List<TaskTiming> timings() {
        long submit = run.recorder.submitNanos;
        List<TaskTiming> out = new ArrayList<>(table.size());
        for (int p = 0, n = table.size(); p < n; p++) {
            DynamicTask<?> t = table.get(p);
            if (t == null) {
                continue;
            }
            TaskState s = t.state();
            Throwable c = s == TaskState.FAILED || s == TaskState.CANCELLED ? t.error() : null;
            boolean started = t.lane >= 0;
            out.add(new TaskTiming(
                    t.index(),
                    t.name,
                    t.name,
                    s,
                    started ? Device.CPU : null,
                    t.lane,
                    started ? 1 : 0,
                    t.readyNanos == 0 ? 0 : t.readyNanos - submit,
                    started && t.startNanos != 0 ? t.startNanos - submit : -1,
                    s.isTerminal() && started && t.endNanos != 0 ? t.endNanos - submit : -1,
                    c != null ? TaskFailure.describe(c) : null));
        }
        return out;
    }
}
