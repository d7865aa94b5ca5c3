package io.hts.engine.run;

import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.timelimiter.TimeLimiter;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells Resilience4j how an attempt ended, and survives what that runs of the user's code: a
 * retry's interval function and exception predicates, and the event consumers of a retry or time
 * limiter. Whatever they throw cannot break the run's bookkeeping: a retry that cannot decide does
 * not retry (the task fails with its body's error, the throw attached to it as suppressed, and a
 * warning is logged naming the task); a throwing consumer on success or on a time-out is logged.
 * Each call into Resilience4j first tells the worker that code not the kernel's runs
 * ({@link RunRecorder#userCodeRuns}), so that the next task's recorded start does not absorb it.
 * Stateless; called by the owner of the attempt's outcome.
 */
final class ResilienceOutcomes {

    private static final Logger log = LoggerFactory.getLogger(ResilienceOutcomes.class);

    private ResilienceOutcomes() {}

    /**
     * The wait before the next attempt in milliseconds, or a negative number when the task must
     * not retry (Resilience4j's answer, or its failure to answer).
     */
    static long retryDelay(Supplier<Retry.AsyncContext<Object>> context, Throwable error, String task) {
        RunRecorder.userCodeRuns();
        try {
            long delay = context.get().onError(error);
            if (delay < -1) { // -1 is Resilience4j's "no retry"; less is a backoff's negative answer
                IllegalArgumentException refused = new IllegalArgumentException("the retry of task '" + task
                        + "' answered a wait of " + delay + " ms; accepted is a wait of 0 ms or more");
                attach(error, refused);
                log.warn("{}; the task is not retried", refused.getMessage());
            }
            return delay;
        } catch (Throwable ex) {
            attach(error, ex);
            warn("the retry of task '{}' threw {} while deciding whether to retry; the task is not retried", task, ex);
            return -1;
        }
    }

    /**
     * The wait before the next attempt when the retry retries on this result, or a negative number
     * (no retry configured for results, attempts used up, or the retry's predicate threw).
     */
    static long retryDelayForResult(
            Supplier<Retry.AsyncContext<Object>> context, @Nullable Object result, String task) {
        RunRecorder.userCodeRuns();
        try {
            return context.get().onResult(result);
        } catch (Throwable ex) {
            warn(
                    "the retry of task '{}' threw {} while deciding whether to retry on its result; the result stands",
                    task,
                    ex);
            return -1;
        }
    }

    static void retrySucceeded(Retry.AsyncContext<Object> ctx, String task) {
        RunRecorder.userCodeRuns();
        try {
            ctx.onComplete();
        } catch (Throwable ex) {
            warn("the retry of task '{}' threw {} when told of its success; the task succeeded", task, ex);
        }
    }

    static void limiterSucceeded(TimeLimiter limiter, String task) {
        RunRecorder.userCodeRuns();
        try {
            limiter.onSuccess();
        } catch (Throwable ex) {
            warn("the time limiter of task '{}' threw {} when told of its success; the task goes on", task, ex);
        }
    }

    static void limiterFailed(TimeLimiter limiter, Throwable error, String task) {
        RunRecorder.userCodeRuns();
        try {
            limiter.onError(error);
        } catch (Throwable ex) {
            warn("the time limiter of task '{}' threw {} when told of a failure; the task goes on", task, ex);
        }
    }

    /** What a time-out's message says of the limit. */
    static String duration(@Nullable TimeLimiter limiter) {
        try {
            return limiter == null
                    ? "?"
                    : io.hts.engine.observe.Elapsed.of(
                            limiter.getTimeLimiterConfig().getTimeoutDuration());
        } catch (Throwable ex) {
            return "?";
        }
    }

    /** Whether a time-out interrupts the abandoned body (Resilience4j's {@code cancelRunningFuture}, true by default). */
    static boolean interruptsOnTimeOut(@Nullable TimeLimiter limiter) {
        try {
            return limiter == null || limiter.getTimeLimiterConfig().shouldCancelRunningFuture();
        } catch (Throwable ex) {
            return true;
        }
    }

    private static void attach(Throwable error, Throwable ex) {
        try {
            // bounded: a body that throws one shared exception instance must not grow it without end
            if (error != ex && error.getSuppressed().length < 8) {
                error.addSuppressed(ex);
            }
        } catch (Throwable ignored) {
            // an exception type that refuses suppression: the warning still names the problem
        }
    }

    private static void warn(String message, String task, Throwable ex) {
        try {
            log.warn(message, task, ex.getClass().getName(), ex);
        } catch (Throwable ignored) {
            // a throwable whose printing throws: the run goes on
        }
    }
}
