package io.hts.engine.run;

import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.Worker;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.run.internal.RunExtension;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * How a task's end spreads through its run: the one path by which every task becomes final, and
 * what the one thread that made it final does then.
 *
 * <p><b>The owner's duties.</b> Every terminal transition is a compare-and-set in
 * {@link DependencyManager}; the thread that wins it, and only that thread, then in this order:
 * stores the task's result or cause (before the transition when it owns the RUNNING state, right
 * after it when it cancelled a task that had not started; {@link GraphRun#errorOf} waits out that
 * one store), records a failure, publishes the task's event, completes its watchers, cancels
 * device-ordered successors that followed its work, makes successors ready (success) or cancels
 * its not-started descendants with its cause (failure or cancellation), stops a fail-fast run,
 * returns its references to its predecessors' results, and finally contributes to the run's count
 * (see {@link RunState}) for itself and every task it cancelled. A thread that loses a transition
 * does none of this.
 *
 * <p><b>Causes.</b> A task cancelled because another failed gets
 * {@code TaskCancelledException("cancelled because task 'x' failed", failure)}; when a fail-fast
 * run stops, that same exception is the run's stop cause, and every task the stop cancels (also
 * one that won READY to RUNNING after the stop and therefore does not start) gets it. A task
 * cancelled by {@code run.cancel(task)} gets that request's cause, a run cancelled by
 * {@code run.cancel()} the run's.
 *
 * <p><b>Cancellation requests.</b> A task's cancellation is recorded (a concurrent map, written
 * before the task's transition is attempted) and then either wins CREATED/READY/RETRYING to
 * CANCELLED, or finds the task RUNNING and asks it to stop: its body sees
 * {@code ctx.isCancelled()} and an interrupt, and when it returns the task ends CANCELLED.
 */
final class Propagation {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Propagation.class);

    /** Above this many cancellations in one sweep, one summary event stands for the rest. */
    static final int MAX_EVENTS_PER_SWEEP = 1000;

    private final GraphRun run;
    private final GraphTopology topology;
    private final DependencyManager deps;
    private final Map<Integer, TaskCancelledException> taskCancels = new ConcurrentHashMap<>();
    private volatile boolean anyTaskCancel;

    Propagation(GraphRun run) {
        this.run = run;
        this.topology = run.topology;
        this.deps = run.deps;
    }

    // ================================================================== requests

    /** Why task {@code i} should stop: its own cancellation, or the run's stop cause; null when it should not. */
    @Nullable
    Throwable cancelRequest(int i) {
        Throwable stop = run.state.stopCause();
        if (stop != null) {
            return stop;
        }
        return anyTaskCancel ? taskCancels.get(i) : null;
    }

    /** The cancellation asked for task {@code i} itself ({@code run.cancel(task)} or its group), or null. */
    @Nullable
    TaskCancelledException taskCancelRequest(int i) {
        return anyTaskCancel ? taskCancels.get(i) : null;
    }

    /**
     * Cancels one task and its descendants: at once when it has not started, when its body returns
     * when it runs.
     *
     * @return whether the task was not final at the call
     */
    boolean cancelTask(int i, TaskCancelledException cause) {
        if (deps.state(i).isTerminal()) {
            return false;
        }
        request(i, cause);
        if (deps.tryCancel(i)) {
            cancelledByCaller(i, cause);
            return true;
        }
        boolean live = !deps.state(i).isTerminal(); // looked at before the interrupt can end it
        run.attempts.interrupt(i);
        RunExtension extension = run.extension;
        if (extension != null && run.plan.owns(i)) {
            extension.cancelRemote(i, cause);
        }
        return live;
    }

    /** Records that task {@code i} should stop; before anything reads its state or its attempt's phase. */
    void request(int i, TaskCancelledException cause) {
        taskCancels.putIfAbsent(i, cause);
        anyTaskCancel = true;
    }

    /**
     * Makes the run stop: nothing new starts, and every task that has not started is cancelled
     * with {@code cause}. Only the first stop sweeps; later ones find the cause set.
     */
    void stop(Throwable cause) {
        if (!run.state.stop(cause)) {
            return;
        }
        stopSlices(cause); // a fail-fast stop (a dynamic task's failure) does not wait for slices elsewhere
        run.state.counted(sweepNotStarted(cause));
    }

    private int sweepNotStarted(Throwable cause) {
        int[] events = {0};
        int count = deps.cancelAllNotStarted(s -> cancelledDuties(s, cause, events));
        summarize(events[0], cause);
        DynamicTasks dynamic = run.dynamic; // read after the stop cause was set: see DynamicTasks
        if (dynamic != null) {
            count += dynamic.cancelAllNotStarted(cause);
        }
        return count;
    }

    // ================================================================== ends of running tasks

    /**
     * The owner of a RUNNING attempt's outcome reports success: results, events, successors, count.
     *
     * @return a successor to run next on {@code w}, or null
     */
    @Nullable
    PoolTask succeeded(TaskExecution e, @Nullable Object result, @Nullable Worker w) {
        int i = e.index;
        run.storeResult(i, result);
        if (!deps.tryEnd(i, TaskState.SUCCEEDED)) {
            throw new IllegalStateException("task '" + topology.name(i) + "' was not RUNNING when its attempt "
                    + e.attempt + " succeeded; this is a bug in HTS");
        }
        if (run.plan.anyRetry) {
            run.attempts.retries.succeeded(i);
        }
        RunRecorder recorder = run.recorder;
        if (recorder.wantsRoutine()) {
            recorder.publish(EventType.TASK_SUCCEEDED, i, e.device, e.lane, e.attempt, null, null, null);
        }
        run.watchers.ended(i);
        PoolTask next = null;
        for (int k = topology.successorStart(i), stop = topology.successorEnd(i); k < stop; k++) {
            int s = topology.successor(k);
            PoolTask t = null;
            if (w != null && run.placement.runsAsPlainCpu(s)) {
                // this task was its only dependency: its attempt counts it as it starts, one atomic step for both
                t = TaskExecution.countingDependency(run, s);
            } else if (deps.dependencyDone(s)) {
                t = run.placement.ready(s);
            }
            if (t == null) {
                continue;
            }
            if (w == null) {
                run.pool.submit(t);
            } else if (next == null) {
                next = t;
            } else {
                w.push(t);
            }
        }
        ResultLifetimes lifetimes = run.lifetimes;
        if (lifetimes != null) {
            lifetimes.ended(i);
        }
        if (w != null) {
            w.countLocally(run.state);
        } else {
            run.state.counted(1);
        }
        return next;
    }

    /**
     * The owner of a RUNNING attempt's outcome ends the task FAILED (retries exhausted, not
     * retryable, or no retry) or CANCELLED (it was asked to stop).
     */
    void endRunning(TaskExecution e, TaskState to, Throwable cause) {
        int i = e.index;
        TaskCancelledException spread = to == TaskState.FAILED ? becauseFailed(i, cause) : null;
        // nothing new starts from here, before anyone hears of the failure
        boolean stopped = spread != null && run.failureMode() == FailureMode.FAIL_FAST && run.state.stop(spread);
        run.storeOutcome(i, cause);
        if (!deps.tryEnd(i, to)) {
            throw new IllegalStateException("task '" + topology.name(i) + "' was not RUNNING when its attempt "
                    + e.attempt + " ended " + to + "; this is a bug in HTS");
        }
        ended(i, to, cause, spread, e.device, e.lane, e.attempt);
        if (stopped) {
            stopSlices(spread);
        }
    }

    /**
     * The run failed fast: its slices on other members stop (their results would reach nobody, and
     * nothing here need wait for them); bodies running here finish as they would.
     */
    private void stopSlices(Throwable cause) {
        RunExtension extension = run.extension;
        if (extension != null) {
            extension.cancelled(cause);
        }
    }

    /**
     * A READY task that cannot be placed on any device fails without running; a concurrent
     * cancellation wins over it.
     */
    void failUnstarted(int i, Throwable error, @Nullable Device device, int attempt) {
        if (!deps.tryFailUnstarted(i)) {
            return;
        }
        run.storeOutcome(i, error);
        TaskCancelledException spread = becauseFailed(i, error);
        boolean stopped = run.failureMode() == FailureMode.FAIL_FAST && run.state.stop(spread);
        ended(i, TaskState.FAILED, error, spread, device, -1, attempt);
        if (stopped) {
            stopSlices(spread);
        }
    }

    /**
     * The duties of a not-started task whose {@code tryCancel} the caller won (a cancel request, or a
     * backend reporting a queued task cancelled), and of its descendants; counts them.
     */
    void cancelledByCaller(int i, TaskCancelledException cause) {
        int[] events = {0};
        int count = 1 + cancelledNotStarted(i, cause, events);
        summarize(events[0], cause);
        run.state.counted(count);
    }

    /** The common end of a task that FAILED or was CANCELLED by the owner of its RUNNING (or READY) state. */
    private void ended(
            int i,
            TaskState to,
            Throwable cause,
            @Nullable TaskCancelledException spread,
            @Nullable Device device,
            int lane,
            int attempt) {
        if (to == TaskState.FAILED) {
            run.state.failed(new TaskFailure(topology.name(i), i, cause, attempt));
            run.recorder.publish(EventType.TASK_FAILED, i, device, lane, attempt, cause, null, null);
        } else {
            run.state.taskCancelled();
            run.recorder.publish(EventType.TASK_CANCELLED, i, device, lane, attempt, cause, null, null);
        }
        run.watchers.ended(i);
        run.ordering.cancelFollowers(i, cause);
        ResultLifetimes lifetimes = run.lifetimes;
        if (lifetimes != null) {
            lifetimes.ended(i);
        }
        Throwable descendantsCause = spread != null ? spread : cause;
        int[] events = {0};
        int count = 1 + deps.cancelDescendants(i, s -> cancelledDuties(s, descendantsCause, events));
        summarize(events[0], descendantsCause);
        if (spread != null && run.state.stopCause() == spread) {
            count += sweepNotStarted(spread); // this failure stopped the fail-fast run: it sweeps
        }
        run.state.counted(count);
    }

    /** The duties of a task this thread cancelled before it started, and of its descendants; not counted. */
    private int cancelledNotStarted(int i, Throwable cause, int[] events) {
        cancelledDuties(i, cause, events);
        return deps.cancelDescendants(i, s -> cancelledDuties(s, cause, events));
    }

    private void cancelledDuties(int i, Throwable cause, int[] events) {
        run.storeOutcome(i, cause);
        run.state.taskCancelled();
        if (events[0]++ < MAX_EVENTS_PER_SWEEP || run.recorder.wantsRoutine()) {
            run.recorder.publish(EventType.TASK_CANCELLED, i, null, -1, 0, cause, null, null);
        }
        run.watchers.ended(i);
        run.placement.withdrawWait(i);
        RunExtension extension = run.extension;
        if (extension != null && run.plan.owns(i)) {
            extension.notStarted(i);
        }
        ResultLifetimes lifetimes = run.lifetimes;
        if (lifetimes != null) {
            lifetimes.ended(i);
        }
    }

    private void summarize(int cancelled, Throwable cause) {
        summarize(run.recorder, cancelled, cause, "tasks");
    }

    /**
     * After a sweep that cancelled {@code cancelled} tasks (of the graph, or {@code what} else): one
     * event for those beyond {@link #MAX_EVENTS_PER_SWEEP}, when routine events are not wanted.
     */
    static void summarize(RunRecorder recorder, int cancelled, Throwable cause, String what) {
        if (cancelled > MAX_EVENTS_PER_SWEEP && !recorder.wantsRoutine()) {
            recorder.publish(
                    EventType.TASK_CANCELLED,
                    -1,
                    null,
                    -1,
                    0,
                    cause,
                    null,
                    (cancelled - MAX_EVENTS_PER_SWEEP) + " more " + what + " cancelled (events not shown)");
        }
    }

    private TaskCancelledException becauseFailed(int i, Throwable failure) {
        return becauseFailed(topology.name(i), failure);
    }

    /** The cause given to the tasks cancelled because task {@code name} failed. */
    static TaskCancelledException becauseFailed(String name, Throwable failure) {
        return new TaskCancelledException("cancelled because task '" + name + "' failed", failure);
    }

    /** For the log of a listener or release failure. */
    static void warn(String what, Throwable ex) {
        try {
            log.warn(what, ex);
        } catch (Throwable ignored) {
            // logging must not break the run's bookkeeping
        }
    }
}
