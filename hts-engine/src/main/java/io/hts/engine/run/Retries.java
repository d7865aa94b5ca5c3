package io.hts.engine.run;

import io.github.resilience4j.retry.MaxRetriesExceededException;
import io.github.resilience4j.retry.Retry;
import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.graph.Releasable;
import io.hts.engine.observe.EventType;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Whether and when a task tries again after an attempt failed (or returned a result its retry
 * configuration retries on): the task's {@link Retry.AsyncContext} decides; the retry is queued on
 * the scheduler's timer after the backoff (no worker sleeps), and starts only if the task is still
 * RETRYING then (a cancellation meanwhile wins).
 *
 * <p><b>A lost device.</b> A task one of whose attempts a device reported with
 * {@link io.hts.engine.exec.DeviceTask#failDeviceLost} (its error took the device out of service:
 * a sticky CUDA error) is not sent to a device again, by any later retry, even when the report
 * came after the attempt had timed out: a task with a CPU body retries on the CPU, one without
 * ends FAILED with the error of its failing attempt at once, so that the error stays the task's and, when it is the
 * first, its run's first failure (a retry would only meet the device DOWN and end the task with
 * a refusal instead, after the failures of other tasks the loss ended).
 *
 * <p><b>Ownership.</b> Only the owner of a RUNNING attempt's end asks here (see {@link Attempts});
 * the move to RETRYING is its compare-and-set ({@link DependencyManager#tryRetry}), and the queued
 * retry starts only by winning RETRYING to READY. The contexts are per task, in a concurrent map
 * written only by those owners (one attempt of a task at a time).
 */
final class Retries {

    private final GraphRun run;
    private final ExecutionPlan plan;
    private final Map<Integer, Retry.AsyncContext<Object>> contexts = new ConcurrentHashMap<>();
    /** Tasks a device reported lost; made on the first report (rare), published by the volatile store. */
    private volatile @Nullable Set<Integer> lost;

    Retries(GraphRun run) {
        this.run = run;
        this.plan = run.plan;
    }

    /**
     * An attempt that ran failed and the run is not stopping: queues a retry when the task's
     * configuration allows one.
     *
     * @return whether a retry was queued (the task is RETRYING); otherwise it is the caller's to end
     */
    boolean afterFailure(TaskExecution e, Throwable error) {
        int i = e.index;
        boolean cpuOnly = isDeviceLost(i);
        if (cpuOnly && !plan.has(i, ExecutionPlan.CPU)) {
            contexts.remove(i);
            return false; // nowhere else to run: it ends with the error that cost its device
        }
        Retry retry = plan.retry(i, e.device);
        if (retry == null) {
            return false;
        }
        long delay = ResilienceOutcomes.retryDelay(
                () -> contexts.computeIfAbsent(i, k -> retry.asyncContext()), error, run.topology.name(i));
        if (delay >= 0 && run.deps.tryRetry(i)) {
            schedule(
                    e,
                    error,
                    delay,
                    cpuOnly ? "it failed and its device is out of service (the retry runs on the CPU)" : "it failed");
            return true;
        }
        contexts.remove(i);
        return false;
    }

    /**
     * A retry whose configuration retries on some results ({@code RetryConfig.retryOnResult}) is
     * asked about this one: when it says so (and the run is not stopping), the task goes to
     * RETRYING as after a failure, and the result reaches nobody.
     */
    boolean onResult(TaskExecution e, @Nullable Object result) {
        int i = e.index;
        Retry retry = plan.retry(i, e.device);
        if (retry == null || run.state.stopCause() != null) {
            return false;
        }
        long delay = ResilienceOutcomes.retryDelayForResult(
                () -> contexts.computeIfAbsent(i, k -> retry.asyncContext()), result, run.topology.name(i));
        if (delay < 0 || !run.deps.tryRetry(i)) {
            return false;
        }
        if (result instanceof Releasable r) {
            ResultLifetimes.releaseUnread(r, run, i);
        }
        schedule(e, null, delay, "its result is retried on");
        return true;
    }

    /**
     * The retry declined to retry a result ({@link #onResult} said no): with Resilience4j's
     * {@code failAfterMaxAttempts(true)}, a result its {@code retryOnResult} still rejects when the
     * attempts are used up fails the task with a {@link MaxRetriesExceededException}, as
     * Resilience4j's own decorators do; otherwise {@code null} and the result stands.
     */
    @Nullable
    Throwable rejectedAfterLastAttempt(TaskExecution e, @Nullable Object result) {
        int i = e.index;
        Retry retry = plan.retry(i, e.device);
        if (retry == null || !contexts.containsKey(i) || !retry.getRetryConfig().isFailAfterMaxAttempts()) {
            return null;
        }
        RunRecorder.userCodeRuns(); // the user's predicate
        try {
            java.util.function.Predicate<@Nullable Object> rejects =
                    retry.getRetryConfig().getResultPredicate();
            if (rejects == null || !rejects.test(result)) {
                return null;
            }
        } catch (Throwable ex) {
            return null; // retryDelayForResult warned of the same predicate's failure; the result stands
        }
        // the context stays: its attempts are used up, so the failure that follows is not retried
        return MaxRetriesExceededException.createMaxRetriesExceededException(retry);
    }

    /**
     * A device reported an attempt of task {@code i} lost ({@link TaskExecution#failDeviceLost}):
     * from now on the task's retries run on the CPU, or, without a CPU body, there are none. Kept
     * for the run's life, whichever attempt (a timed-out one included) the report belongs to.
     */
    void deviceLost(int i) {
        Set<Integer> s = lost;
        if (s == null) {
            synchronized (this) {
                s = lost;
                if (s == null) {
                    s = ConcurrentHashMap.newKeySet();
                    lost = s;
                }
            }
        }
        s.add(i);
    }

    private boolean isDeviceLost(int i) {
        Set<Integer> s = lost;
        return s != null && s.contains(i);
    }

    /** The task succeeded: its retry context (if it was retried) hears so, and is forgotten. */
    void succeeded(int i) {
        Retry.AsyncContext<Object> ctx = contexts.remove(i);
        if (ctx != null) {
            ResilienceOutcomes.retrySucceeded(ctx, run.topology.name(i));
        }
    }

    /** RUNNING to RETRYING was won: the next attempt is queued on the timer after {@code delay} ms. */
    private void schedule(TaskExecution e, @Nullable Throwable error, long delay, String why) {
        int i = e.index;
        int next = e.attempt + 1;
        run.recorder.publish(
                EventType.TASK_RETRYING,
                i,
                e.device,
                e.lane,
                e.attempt,
                error,
                null,
                why + "; attempt " + next + " in " + delay + " ms");
        try {
            run.scheduler.timer().schedule(() -> retryNow(i, next), delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException ex) {
            retryNow(i, next); // the timer is shut down: the retry goes at once
        }
    }

    private void retryNow(int i, int attempt) {
        if (!run.deps.tryRequeue(i)) {
            return; // cancelled while it waited
        }
        if (run.recorder.wantsRoutine()) {
            run.recorder.publish(EventType.TASK_READY, i, null, -1, attempt, null, null, null);
        }
        try {
            TaskExecution e = new TaskExecution(run, i, attempt);
            // read now, not when the retry was queued: a report of a lost device may arrive meanwhile
            // (an attempt that timed out first, whose device work then failed for good)
            PoolTask t = isDeviceLost(i)
                    ? run.placement.dispatchOnCpu(e, "a device it ran on is out of service")
                    : run.placement.dispatch(e);
            if (t != null) {
                run.pool.submit(t);
            }
        } catch (Throwable ex) { // the pool refused it (shut down), or a backend threw
            run.propagation.failUnstarted(i, ex, null, attempt);
        }
    }
}
