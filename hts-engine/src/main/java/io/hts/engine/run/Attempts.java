package io.hts.engine.run;

import io.github.resilience4j.timelimiter.TimeLimiter;
import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.ResourceDemand;
import io.hts.engine.exec.internal.Worker;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Releasable;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The life of an attempt: it starts (READY to RUNNING), its body runs on a CPU worker or its
 * device reports it, it ends, and then the task succeeds, is retried after Resilience4j's backoff,
 * or fails or is cancelled for good; time limits and abandoned bodies.
 *
 * <p><b>Ownership.</b> An attempt's end is reported once: by its body's return or its device's
 * report, or by its time-out, whichever wins the attempt's compare-and-set
 * ({@link TaskExecution}); the winner owns the task's RUNNING state and takes it on to RETRYING or
 * a final state. A body that returns after its time-out only gives back what it held (its
 * resources, its references to its inputs, a releasable late result). A device that reports an
 * attempt it never started cannot end a task that is not READY.
 *
 * <p><b>Time limits.</b> Resilience4j's {@link TimeLimiter} gives the duration and receives the
 * outcome ({@code onSuccess} / {@code onError}, so its events and metrics work), but the time-out
 * itself is a task on the scheduler's timer, cancelled (and removed from the timer's queue) when
 * the body returns first, however it returns: nothing stays queued until the limit expires. A
 * worker adds its batched count of finished tasks (see {@link RunState}) before it runs a timed
 * body, because the timer may end that task while the worker is still inside the body.
 *
 * <p><b>Retries</b> are {@link Retries}'s.
 */
final class Attempts {

    private final GraphRun run;
    private final DependencyManager deps;
    private final ExecutionPlan plan;
    final Retries retries;
    private final Set<TaskExecution> abandoned = ConcurrentHashMap.newKeySet();

    Attempts(GraphRun run) {
        this.run = run;
        this.deps = run.deps;
        this.plan = run.plan;
        this.retries = new Retries(run);
    }

    // ================================================================== CPU

    /** Runs an attempt on a CPU worker; returns the continuation (a successor to run next). */
    @Nullable
    PoolTask runOnCpu(TaskExecution e, Worker w) {
        int i = e.index;
        w.flushCountsUnless(run.state);
        e.device = Device.CPU;
        // A flag left by user code that ran on this worker since its last task (a listener, a
        // whenDone stage, a release) is not for this body.
        Thread.interrupted();
        // The body counts as running (interruptible) from before READY to RUNNING: that
        // compare-and-set then orders this publication before the look at a cancel request below.
        e.beginBody(w);
        boolean started = false;
        try {
            started = begin(e, w.index(), w);
        } finally {
            if (!started) {
                e.endBody();
            }
        }
        if (!started) {
            return null;
        }
        // cancelled as it started: an interrupter may have seen the body not yet running
        e.settleStart(run.propagation.taskCancelRequest(i) != null);
        TaskBody<Object> body = plan.cpuBody(i);
        Object result = null;
        Throwable error = null;
        if (body != null) {
            try {
                if (plan.has(i, ExecutionPlan.TIMED)) {
                    w.flushCounts(); // the timer may end this task while this worker is inside the body
                    armTimeLimit(e);
                }
                result = runBody(body, e);
            } catch (Throwable ex) {
                error = ex;
            }
        }
        e.endBody();
        long t1 = run.recorder.now();
        run.recorder.taskEndedOn(w, t1);
        return ended(e, result, error, t1, w, false);
    }

    private @Nullable Object runBody(TaskBody<Object> body, TaskExecution e) throws Exception {
        TaskScopes scopes = run.scheduler.scopes;
        return scopes.isEmpty() ? body.run(e) : scopes.around(run, e.index, () -> body.run(e));
    }

    /**
     * READY to RUNNING for an attempt about to run on {@code e.device}'s {@code lane}; false when
     * it was cancelled meanwhile or the run stops (it is then recorded as cancelled and must not
     * run).
     */
    private boolean begin(TaskExecution e, int lane, @Nullable Worker w) {
        int i = e.index;
        if (!(e.countsDependency() ? deps.dependencyDoneAndStart(i) : deps.tryStart(i))) {
            e.notStarted();
            releaseHeld(e);
            return false;
        }
        Throwable stop = run.state.stopCause();
        if (stop != null) {
            e.notStarted(); // it does not start: whatever its device reports later is ignored
            releaseHeld(e);
            run.propagation.endRunning(e, TaskState.CANCELLED, stop);
            return false;
        }
        e.started();
        e.lane = lane;
        run.recorder.started(e, lane, w);
        return true;
    }

    /** The end of an attempt whose body returned (or whose device reported) on any device. */
    private @Nullable PoolTask ended(
            TaskExecution e,
            @Nullable Object result,
            @Nullable Throwable error,
            long t1,
            @Nullable Worker w,
            boolean claimed) {
        int i = e.index;
        TimeLimiter limiter = e.limiter();
        if (limiter != null) {
            if (!claimed && !e.claimCompletion()) {
                if (e.claimLateReturn()) {
                    abandonedReturned(e, result, error);
                }
                return null; // else a second report of a device
            }
            Future<?> timeout = e.timeout();
            if (timeout != null) {
                timeout.cancel(false);
            }
            if (error == null) {
                ResilienceOutcomes.limiterSucceeded(limiter, run.topology.name(i));
            } else {
                ResilienceOutcomes.limiterFailed(limiter, error, run.topology.name(i));
            }
        }
        run.recorder.ended(i, t1);
        var cell = plan.costCell(i);
        if (cell != null && error == null && e.lane != TaskExecution.REMOTE_LANE) {
            // (a remote attempt's time is its slice's round trip: its slice records the bodies' own time)
            cell.record(e.device, t1 - e.startNanos);
        }
        releaseHeld(e, error == null ? result : null);
        if (error == null && run.propagation.taskCancelRequest(i) == null) {
            if (plan.anyRetry) {
                if (retries.onResult(e, result)) {
                    return null;
                }
                Throwable rejected = retries.rejectedAfterLastAttempt(e, result);
                if (rejected != null) {
                    if (result instanceof Releasable r) {
                        ResultLifetimes.releaseUnread(r, run, i);
                    }
                    attemptFailed(e, rejected);
                    return null;
                }
            }
            return run.propagation.succeeded(e, result, w);
        }
        if (error == null && result instanceof Releasable r) {
            ResultLifetimes.releaseUnread(r, run, i); // the task was cancelled while running: its result reaches nobody
        }
        attemptFailed(
                e,
                error != null
                        ? error
                        : new TaskCancelledException(
                                "task '" + run.topology.name(i) + "' was cancelled while running"));
        return null;
    }

    /** An attempt that ran failed: retry after the backoff, or end the task FAILED or CANCELLED. */
    private void attemptFailed(TaskExecution e, Throwable error) {
        int i = e.index;
        Throwable cancel = run.propagation.taskCancelRequest(i);
        Throwable stop = run.state.stopCause();
        if (cancel == null && stop != null && (run.state.cancelRequested() || isInterruption(error))) {
            cancel = stop;
        }
        if (cancel != null) {
            run.propagation.endRunning(e, TaskState.CANCELLED, cancel);
            return;
        }
        if (stop == null && retries.afterFailure(e, error)) {
            return;
        }
        run.propagation.endRunning(e, TaskState.FAILED, error);
    }

    // ================================================================== devices

    boolean startOnDevice(TaskExecution e, int lane) {
        if (!e.claimStart()) {
            return false; // moved to the CPU, reported or withdrawn already: it is not the device's any more
        }
        if (!begin(e, lane, null)) {
            return false;
        }
        if (plan.has(e.index, ExecutionPlan.TIMED)) {
            armTimeLimit(e);
        }
        return true;
    }

    /** A device backend reports an attempt's outcome (at most once counts). */
    void reported(TaskExecution e, @Nullable Object result, @Nullable Throwable error) {
        while (true) {
            int outcome = e.outcome();
            if (outcome == TaskExecution.STARTING) {
                Thread.onSpinWait(); // its start is being decided on another thread (no user code runs there)
            } else if (outcome == TaskExecution.QUEUED) {
                if (e.withdraw()) {
                    neverStarted(e, result, error);
                    return;
                }
                // a start claimed it meanwhile: look again
            } else {
                break;
            }
        }
        // Without a time limit (yet: a start on another thread may arm one after this look) the
        // report claims the completion here; with one, ended() claims it against the timer.
        boolean claimed = false;
        if (e.limiter() == null) {
            if (!e.claimCompletion()) {
                return; // a second report
            }
            claimed = true;
        }
        long t1 = run.recorder.now();
        ended(e, result, error, t1, null, claimed);
    }

    /** A backend reported an attempt it never started: it cannot end a task that is not READY. */
    private void neverStarted(TaskExecution e, @Nullable Object result, @Nullable Throwable error) {
        releaseHeld(e);
        if (result instanceof Releasable r) {
            ResultLifetimes.releaseUnread(r, run, e.index);
        }
        int i = e.index;
        if (error instanceof TaskCancelledException cancelled) {
            if (deps.tryCancel(i)) {
                run.propagation.cancelledByCaller(i, cancelled);
            }
            return;
        }
        Throwable cause = error != null
                ? error
                : new IllegalStateException("the " + e.device + " backend" + " reported a result for task '"
                        + run.topology.name(i) + "' without starting it");
        run.propagation.failUnstarted(i, cause, e.device, e.attempt);
    }

    /** A device backend gives a queued attempt back: it runs on the CPU when the task has a CPU body. */
    boolean fallBackToCpu(TaskExecution e, String reason) {
        int i = e.index;
        if (!plan.has(i, ExecutionPlan.CPU)) {
            return false;
        }
        if (!e.withdraw()) {
            // Started (or starting) on the device, reported, or moved already: refused; a started
            // attempt stays the device's to report.
            return false;
        }
        TaskExecution cpu = new TaskExecution(run, i, e.attempt);
        ResourceDemand held = e.takeHeld();
        if (held != null) {
            cpu.hold(held);
        }
        if (!deps.is(i, TaskState.READY)) {
            releaseHeld(cpu);
            return true; // cancelled meanwhile
        }
        run.recorder.publish(
                EventType.TASK_PLACED,
                i,
                Device.CPU,
                -1,
                e.attempt,
                null,
                null,
                "moved from the GPU to the CPU: " + reason);
        run.pool.submit(cpu);
        return true;
    }

    long deadline(TaskExecution e) {
        TimeLimiter limiter = e.limiter();
        if (limiter == null) {
            return Long.MAX_VALUE;
        }
        long nanos = limiter.getTimeLimiterConfig().getTimeoutDuration().toNanos();
        long deadline = e.startNanos + nanos;
        return deadline < e.startNanos ? Long.MAX_VALUE : deadline;
    }

    // ================================================================== time limits

    private void armTimeLimit(TaskExecution e) {
        TimeLimiter limiter = plan.timeLimiter(e.index, e.device);
        if (limiter == null) {
            return;
        }
        if (e.startNanos == 0) {
            e.startNanos = System.nanoTime();
        }
        e.armed(limiter);
        long nanos = limiter.getTimeLimiterConfig().getTimeoutDuration().toNanos();
        Future<?> timeout = run.scheduler.timer().schedule(() -> timedOut(e), nanos, TimeUnit.NANOSECONDS);
        e.timeout(timeout);
        if (e.outcome() != TaskExecution.STARTED) {
            timeout.cancel(false); // a device reported before the limit was armed: nothing to time
        }
    }

    private void timedOut(TaskExecution e) {
        int i = e.index;
        ResultLifetimes lifetimes = run.lifetimes;
        // Taken before the claim: a body returning right after it must find itself abandoned.
        abandoned.add(e);
        if (lifetimes != null) {
            lifetimes.readerAbandoned(i); // the body may still read its inputs
        }
        if (!e.claimTimeout()) {
            abandoned.remove(e); // it returned first
            if (lifetimes != null) {
                lifetimes.readerReturned(i);
            }
            return;
        }
        TimeLimiter limiter = e.limiter();
        TimeoutException error = new TimeoutException("task '" + run.topology.name(i) + "' (attempt " + e.attempt
                + ") exceeded its time limit of " + ResilienceOutcomes.duration(limiter)
                + "; its body is abandoned until it returns");
        if (limiter != null) {
            ResilienceOutcomes.limiterFailed(limiter, error, run.topology.name(i));
        }
        if (ResilienceOutcomes.interruptsOnTimeOut(limiter)) {
            e.interrupt();
        } else {
            e.cancelNested();
        }
        run.recorder.ended(i, run.recorder.now());
        run.recorder.publish(EventType.TASK_TIMED_OUT, i, e.device, e.lane, e.attempt, error, null, null);
        attemptFailed(e, error);
    }

    /** A body whose time-out was reported returned: it gives back what it held. */
    private void abandonedReturned(TaskExecution e, @Nullable Object result, @Nullable Throwable error) {
        abandoned.remove(e);
        releaseHeld(e);
        ResultLifetimes lifetimes = run.lifetimes;
        if (lifetimes != null) {
            lifetimes.readerReturned(e.index);
        }
        if (result instanceof Releasable r) {
            ResultLifetimes.releaseUnread(r, run, e.index); // the timed-out attempt's result reaches nobody
        }
        run.recorder.publish(
                EventType.TASK_ABANDONED_RETURNED,
                e.index,
                e.device,
                e.lane,
                e.attempt,
                error,
                null,
                "the timed-out body returned; its resources are released");
    }

    /** Names of tasks whose time limit passed while their body still runs. */
    List<String> abandoned() {
        List<String> out = new ArrayList<>();
        for (TaskExecution e : abandoned) {
            out.add(run.topology.name(e.index));
        }
        Collections.sort(out);
        return out;
    }

    // ================================================================== cancellation and nested runs

    /** Interrupts the running bodies of task {@code i} (all tasks when -1) of this run on the CPU workers. */
    void interrupt(int i) {
        run.pool.forEachRunning(t -> {
            if (t instanceof TaskExecution e && e.run == run && (i < 0 || e.index == i)) {
                e.interrupt();
            }
        });
    }

    /**
     * {@code ctx.execute(graph)}: runs a graph on this run's scheduler and waits for it, the worker
     * helping with other tasks meanwhile; cancelling or timing out this attempt cancels that run.
     */
    GraphRun executeNested(TaskExecution e, TaskGraph graph) {
        if (e.device != Device.CPU) {
            throw new IllegalStateException("task '" + run.topology.name(e.index) + "' runs on the " + e.device
                    + "; only a CPU body may run a graph and wait for it (a device's thread must not wait)");
        }
        GraphRun nested = run.scheduler.submit(graph);
        try {
            e.waitFor(nested); // cancelled before a canceller could see the nested run: cancelled here
            return nested.await();
        } finally {
            e.waitOver();
        }
    }

    static boolean isInterruption(Throwable error) {
        if (error instanceof InterruptedException
                || error instanceof CancellationException
                || error instanceof java.io.InterruptedIOException
                || error instanceof java.nio.channels.ClosedByInterruptException) {
            return true;
        }
        try {
            return error.getCause() instanceof InterruptedException;
        } catch (Throwable ex) {
            return false; // a getCause() that throws: not an interruption as far as anyone can tell
        }
    }

    void releaseHeld(TaskExecution e) {
        releaseHeld(e, null);
    }

    /** Gives back what an attempt held; the GPU memory it declared stays with a releasable result it returned. */
    private void releaseHeld(TaskExecution e, @Nullable Object result) {
        ResourceDemand d = e.takeHeld();
        if (d != null) {
            ResultLifetimes.giveBack(d, e, result, plan);
        }
    }
}
