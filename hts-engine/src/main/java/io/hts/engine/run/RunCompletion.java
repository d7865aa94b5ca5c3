package io.hts.engine.run;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.Worker;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.Elapsed;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * How a run ends and how callers wait for it: the one {@link #finish()}, by the thread whose count
 * brought the run's pending tasks to zero (see {@link RunState}); the future it completes, whatever
 * the steps before throw; and the waits on it, which on a worker of an HTS pool help with the
 * pool's work instead of blocking the worker.
 */
final class RunCompletion {

    private final GraphRun run;
    /** The users' future: {@link GraphRun#future()} hangs their stages on it. */
    private final CompletableFuture<GraphRun> future = new CompletableFuture<>();
    /**
     * The waits' future, completed just before {@link #future}, with the same outcome. Nothing
     * but the waits depends on it, so a waiter blocked in its {@code get} (which helps fire the
     * dependents of the future it waits on) never runs a user's stage on its own thread, where
     * nothing would keep the stage's interrupts to itself.
     */
    private final CompletableFuture<GraphRun> ended = new CompletableFuture<>();

    private volatile @Nullable RunProfile finalProfile;

    RunCompletion(GraphRun run) {
        this.run = run;
    }

    CompletableFuture<GraphRun> future() {
        return future;
    }

    @Nullable
    RunProfile finalProfile() {
        return finalProfile;
    }

    /**
     * Decides the outcome, records the profile, publishes the run's event and completes the
     * future, which it does whatever the steps before it throw. Called once.
     */
    void finish() {
        RunStatus outcome = RunStatus.FAILED;
        Throwable broken = null;
        GraphRunException failure = null;
        try {
            outcome = run.state.claimFinish();
            long now = System.nanoTime();
            RunProfile profile = run.recorder.profile(outcome, now);
            finalProfile = profile;
            run.state.publish(outcome);
            run.scheduler.runFinished(run, profile);
            run.recorder.runFinished(profile);
            failure = outcome == RunStatus.SUCCEEDED ? null : exception(outcome);
            EventType endEvent = switch (outcome) {
                case SUCCEEDED -> EventType.RUN_SUCCEEDED;
                case CANCELLED -> EventType.RUN_CANCELLED;
                default -> EventType.RUN_FAILED;
            };
            if (run.recorder.wants(endEvent)) { // its detail is made only for someone who reads it
                String detail = Elapsed.count(run.topology.size(), "task") + " in "
                        + Elapsed.of(Duration.ofNanos(now - run.recorder.submitNanos));
                run.recorder.publish(endEvent, -1, null, -1, 0, failure, null, detail);
            }
            if (failure != null) {
                run.scheduler.failedRuns().ended(run, outcome, failure, now - run.recorder.submitNanos); // never throws
            }
        } catch (Throwable ex) {
            broken = ex;
            run.state.publish(outcome);
        } finally {
            Throwable end = broken != null ? broken : failure;
            try {
                complete(ended, end);
                UserCode.run(run.scheduler, () -> complete(future, end)); // the future's dependent stages run here
            } finally {
                if (!ended.isDone()) {
                    complete(ended, end); // the guard itself failed (out of memory, say): the run still ends
                }
                if (!future.isDone()) {
                    complete(future, end);
                }
            }
        }
    }

    private void complete(CompletableFuture<GraphRun> f, @Nullable Throwable end) {
        if (end == null) {
            f.complete(run);
        } else {
            f.completeExceptionally(end);
        }
    }

    private GraphRunException exception(RunStatus outcome) {
        List<String> cancelled = new ArrayList<>();
        for (int i = 0; i < run.topology.size(); i++) {
            if (run.deps.is(i, TaskState.CANCELLED)) {
                cancelled.add(run.topology.name(i));
            }
        }
        DynamicTasks dynamic = run.dynamic;
        if (dynamic != null) {
            dynamic.cancelledNames(cancelled);
        }
        return new GraphRunException(run.runId(), run.graph.name(), outcome, run.state.failures(), cancelled);
    }

    // ================================================================== waiting

    private static final long ASSIST_SPIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The most a waiter keeps the device company before it blocks: its CPU cost per wait is bounded. */
    private static final long ASSIST_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    GraphRun await() {
        refuseDeviceThread();
        awaitHelping(Long.MAX_VALUE);
        try {
            return ended.join();
        } catch (CompletionException ex) {
            throw rethrow(ex.getCause());
        }
    }

    GraphRun await(Duration timeout) throws TimeoutException, InterruptedException {
        refuseDeviceThread();
        long nanos = Math.max(0, saturatedNanos(timeout));
        long now = System.nanoTime();
        long deadline = now + nanos;
        if (deadline - now != nanos || deadline == Long.MAX_VALUE) {
            deadline = Long.MAX_VALUE; // too far to tell apart from no deadline
        }
        awaitHelping(deadline);
        try {
            long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, deadline - System.nanoTime());
            return ended.get(left, TimeUnit.NANOSECONDS);
        } catch (ExecutionException ex) {
            throw rethrow(ex.getCause());
        } catch (TimeoutException ex) {
            TimeoutException t = new TimeoutException("run " + run.runId() + " of graph '" + run.graph.name()
                    + "' did not finish within " + Elapsed.of(timeout) + "; "
                    + Elapsed.count(run.state.pending(), "task")
                    + " unfinished");
            t.initCause(ex);
            throw t;
        }
    }

    /**
     * Waits, until the run is done or the deadline ({@link System#nanoTime()}; {@code Long.MAX_VALUE}
     * for none) passes, helping with the pool's work when the caller is a worker of an HTS pool;
     * returns at once otherwise (the caller then blocks on the future). A body that waits is
     * suspended meanwhile: an interrupt meant for it is kept until the wait is over, never
     * delivered to a task run inside the wait.
     */
    private void awaitHelping(long deadlineNanos) {
        if (ended.isDone()) {
            return;
        }
        if (!(Thread.currentThread() instanceof Worker w)) {
            assistDevice(deadlineNanos);
            return;
        }
        ended.whenComplete((r, ex) -> LockSupport.unpark(w));
        PoolTask current = w.current();
        InterruptibleBody outer = current instanceof InterruptibleBody e && e.bodyRunning() ? e : null;
        // A wait inside a callback (a listener that awaits) keeps the callback's flag to itself:
        // it is not the body's, so it must not go into the body's phase.
        boolean interrupted = (outer == null || UserCode.runningAny()) && Thread.interrupted();
        if (outer != null) {
            outer.suspend();
        }
        try {
            w.pool().helpUntil(w, ended::isDone, deadlineNanos);
        } finally {
            if (outer != null) {
                outer.resume();
            }
            if (interrupted) {
                w.interrupt();
            }
        }
    }

    /**
     * A waiter outside the pool, on a run with GPU bodies, does the device backend's work while the
     * device is busy (spinning for a millisecond, then yielding, as CUDA's default synchronize
     * does), so that a one-task GPU run costs no hand-off to the device's thread and no wake-up of
     * the waiter. It blocks on the future as soon as the backend says there is nothing for it
     * (the device idle, another waiter helping), or when interrupted.
     */
    private void assistDevice(long deadlineNanos) {
        DeviceBackend gpu = gpuOfThisRun();
        if (gpu == null) {
            return;
        }
        long start = System.nanoTime();
        long spinUntil = start + ASSIST_SPIN_NANOS;
        while (!ended.isDone() && !Thread.currentThread().isInterrupted() && gpu.assist()) {
            long now = System.nanoTime();
            if (now - deadlineNanos >= 0 || now - start > ASSIST_MAX_NANOS) {
                return; // past the caller's deadline, or long device work (maybe other runs'): block instead
            }
            if (now - spinUntil < 0) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /**
     * A wait for a run with GPU bodies on the thread that drives the device (a GPU body, a
     * completion action) would wait for itself: refused at once, naming what to do instead.
     */
    private void refuseDeviceThread() {
        DeviceBackend gpu = gpuOfThisRun();
        if (gpu != null && !ended.isDone() && gpu.isDeviceThread()) {
            throw new IllegalStateException("run " + run.runId() + " of graph '" + run.graph.name()
                    + "' is awaited on the"
                    + " thread that drives " + gpu.name() + " (in a GPU body or a completion action), which would wait"
                    + " for itself; enqueue the work in the body, or let successor tasks do it");
        }
    }

    /** The scheduler's device backend when this run has GPU bodies, else null. */
    private @Nullable DeviceBackend gpuOfThisRun() {
        return run.graph.hasGpuBodies() ? run.scheduler.gpu().orElse(null) : null;
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException ex) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    private static RuntimeException rethrow(@Nullable Throwable cause) {
        if (cause instanceof GraphRunException g) {
            return new GraphRunException(g.runId(), g.graphName(), g.status(), g.failures(), g.cancelled());
        }
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new CompletionException(cause);
    }
}
