package io.hts.engine.fault.internal;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.hts.engine.fault.FaultTolerance;
import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Resolves the retries and time limits of the tasks of one graph into Resilience4j instances,
 * with a scheduler's {@link FaultTolerance} defaults and registries. Within one resolution,
 * instances are shared: every task with the same statistics name (a group's members) and the same
 * declaration uses one instance, so Resilience4j's events and metrics aggregate per task kind, not
 * per task; nothing is kept across graphs, so graphs built on the fly leave nothing behind. Not
 * thread-safe: the scheduler resolves a graph on one thread, once per graph and scheduler.
 */
public final class FaultResolution {

    private final FaultTolerance faults;
    private final Map<Object, Retry> retries = new HashMap<>();
    private final Map<Object, TimeLimiter> timeLimiters = new HashMap<>();

    /**
     * A resolution scope for one graph.
     *
     * @param faults the scheduler's defaults and registries
     */
    public FaultResolution(FaultTolerance faults) {
        this.faults = faults;
    }

    /**
     * The retry for a task's attempts on the CPU.
     *
     * @param task the task
     * @return the Resilience4j retry, or {@code null} when the task does not retry
     * @throws GraphValidationException when it names an instance no registry provides
     */
    public @Nullable Retry retryFor(Task<?> task) {
        return retryFor(task, Device.CPU);
    }

    /**
     * The retry for a task's attempts on a device: the task's own, or the device's default.
     *
     * @param task the task
     * @param device where the attempts run
     * @return the Resilience4j retry, or {@code null} when the task does not retry there
     * @throws GraphValidationException when it names an instance no registry provides
     */
    public @Nullable Retry retryFor(Task<?> task, Device device) {
        RetrySpec spec = task.retry() != null ? task.retry() : faults.defaultRetry(device);
        if (spec instanceof RetrySpec.None) {
            return null;
        }
        if (spec instanceof RetrySpec.Instance i) {
            return i.retry();
        }
        if (spec instanceof RetrySpec.Named n) {
            return retries.computeIfAbsent(spec, k -> namedRetry(task, n.instanceName()));
        }
        if (spec instanceof RetrySpec.Configured c) {
            return retries.computeIfAbsent(
                    List.of(task.statisticsName(), spec), k -> Retry.of(task.statisticsName(), c.config()));
        }
        IntervalFunction backoff = spec instanceof RetrySpec.FixedBackoff f
                ? fixed(f.backoff())
                : spec instanceof RetrySpec.CustomBackoff c ? checked(task, c.backoff()) : faults.defaultBackoff();
        return retries.computeIfAbsent(
                List.of(task.statisticsName(), spec),
                k -> Retry.of(
                        task.statisticsName(),
                        RetryConfig.custom()
                                .maxAttempts(spec.retries() + 1)
                                .intervalFunction(backoff)
                                .failAfterMaxAttempts(false)
                                .build()));
    }

    /** A user's backoff that must answer a wait of 0 ms or more; otherwise the task is not retried and the warning names it. */
    private static IntervalFunction checked(Task<?> task, IntervalFunction backoff) {
        return attempt -> {
            Long wait = backoff.apply(attempt);
            if (wait == null || wait < 0) {
                throw new IllegalArgumentException("the backoff of task '" + task.statisticsName() + "' returned "
                        + wait + " ms before attempt " + (attempt + 1) + "; accepted is a wait of 0 ms or more");
            }
            return wait;
        };
    }

    /**
     * The time limiter for a task's attempts on the CPU.
     *
     * @param task the task
     * @return the Resilience4j time limiter, or {@code null} when the task has no time limit
     * @throws GraphValidationException when it names an instance no registry provides
     */
    public @Nullable TimeLimiter timeLimiterFor(Task<?> task) {
        return timeLimiterFor(task, Device.CPU);
    }

    /**
     * The time limiter for a task's attempts on a device: the task's own, or the device's default.
     *
     * @param task the task
     * @param device where the attempts run
     * @return the Resilience4j time limiter, or {@code null} when the task has no time limit there
     * @throws GraphValidationException when it names an instance no registry provides
     */
    public @Nullable TimeLimiter timeLimiterFor(Task<?> task, Device device) {
        TimeLimitSpec spec = task.timeLimit() != null ? task.timeLimit() : faults.defaultTimeLimit(device);
        if (spec instanceof TimeLimitSpec.Limiter l) {
            return l.limiter();
        }
        if (spec instanceof TimeLimitSpec.Named n) {
            return timeLimiters.computeIfAbsent(spec, k -> namedTimeLimiter(task, n.instanceName()));
        }
        if (!(spec instanceof TimeLimitSpec.Timeout t)) {
            return null;
        }
        return timeLimiters.computeIfAbsent(
                List.of(task.statisticsName(), spec),
                k -> TimeLimiter.of(
                        task.statisticsName(),
                        TimeLimiterConfig.custom()
                                .timeoutDuration(t.timeout())
                                .cancelRunningFuture(true)
                                .build()));
    }

    /**
     * A fixed wait; unlike {@code IntervalFunction.of}, zero is allowed (retry at once).
     *
     * @param backoff the wait, 0 or more
     * @return the interval function
     */
    public static IntervalFunction fixed(Duration backoff) {
        long millis = backoff.toMillis();
        return attempt -> millis;
    }

    private Retry namedRetry(Task<?> task, String name) {
        RetryRegistry registry = faults.retryRegistry().orElse(null);
        if (registry == null) {
            throw invalid(
                    task,
                    "uses retry instance '" + name + "' but the scheduler has no RetryRegistry;"
                            + " give it one (Scheduler.builder().retryRegistry(...)) or declare retries on the task");
        }
        Optional<Retry> existing = registry.find(name);
        if (existing.isPresent()) {
            return existing.get();
        }
        if (registry.getConfiguration(name).isPresent()) {
            return registry.retry(name, name);
        }
        throw invalid(
                task,
                "uses retry instance '" + name + "', which the scheduler's RetryRegistry neither holds nor configures"
                        + " (it holds "
                        + registry.getAllRetries().stream()
                                .map(Retry::getName)
                                .sorted()
                                .toList()
                        + "); add it (with Spring Boot, resilience4j.retry.instances." + name + ") or fix the name");
    }

    private TimeLimiter namedTimeLimiter(Task<?> task, String name) {
        TimeLimiterRegistry registry = faults.timeLimiterRegistry().orElse(null);
        if (registry == null) {
            throw invalid(
                    task,
                    "uses time limiter '" + name + "' but the scheduler has no TimeLimiterRegistry;"
                            + " give it one (Scheduler.builder().timeLimiterRegistry(...)) or declare a timeout on the task");
        }
        Optional<TimeLimiter> existing = registry.find(name);
        if (existing.isPresent()) {
            return existing.get();
        }
        if (registry.getConfiguration(name).isPresent()) {
            return registry.timeLimiter(name, name);
        }
        throw invalid(
                task,
                "uses time limiter '" + name + "', which the scheduler's TimeLimiterRegistry neither holds nor"
                        + " configures (it holds "
                        + registry.getAllTimeLimiters().stream()
                                .map(TimeLimiter::getName)
                                .sorted()
                                .toList()
                        + "); add it (with Spring Boot, resilience4j.timelimiter.instances." + name
                        + ") or fix the name");
    }

    private static GraphValidationException invalid(Task<?> task, String what) {
        return new GraphValidationException(
                GraphValidationException.Problem.INVALID_SETTING,
                List.of(task.name()),
                "task '" + task.name() + "' of graph '" + task.graph().name() + "' " + what);
    }
}
