package io.hts.engine.fault;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Turns the retry and time-limit declarations of tasks into Resilience4j {@link Retry} and
 * {@link TimeLimiter} instances, applying the scheduler's defaults and registries.
 *
 * <p>Within one graph instances are shared: every task with the same statistics name (a group's
 * members) and the same declaration uses one instance (see {@link #resolution()}), so
 * Resilience4j's events and metrics aggregate per task kind, not per task; nothing is cached
 * across graphs, so graphs built on the fly leave nothing behind. Named instances come from the
 * registries given (with Spring Boot, the
 * application's, configured under {@code resilience4j.retry.instances.*} and
 * {@code resilience4j.timelimiter.instances.*}); HTS never creates registry beans of its own.
 */
public final class FaultTolerance {

    private final @Nullable RetryRegistry retryRegistry;
    private final @Nullable TimeLimiterRegistry timeLimiterRegistry;
    private final RetrySpec defaultRetry;
    private final RetrySpec gpuDefaultRetry;
    private final IntervalFunction defaultBackoff;
    private final TimeLimitSpec defaultTimeLimit;
    private final TimeLimitSpec gpuDefaultTimeLimit;

    private FaultTolerance(Builder b) {
        this.retryRegistry = b.retryRegistry;
        this.timeLimiterRegistry = b.timeLimiterRegistry;
        this.defaultRetry = b.defaultRetry;
        this.gpuDefaultRetry = b.gpuDefaultRetry != null ? b.gpuDefaultRetry : b.defaultRetry;
        this.defaultBackoff = b.defaultBackoff;
        this.defaultTimeLimit = b.defaultTimeLimit;
        this.gpuDefaultTimeLimit = b.gpuDefaultTimeLimit != null ? b.gpuDefaultTimeLimit : b.defaultTimeLimit;
    }

    /** A builder; by default no retries, no time limit, 100 ms between retries, no registries. */
    public static Builder builder() {
        return new Builder();
    }

    /** Defaults only: no retries and no time limits unless tasks declare them. */
    public static FaultTolerance defaults() {
        return builder().build();
    }

    /** The retry used for tasks that declare none, for attempts on the CPU. */
    public RetrySpec defaultRetry() {
        return defaultRetry;
    }

    /**
     * The retry used for tasks that declare none, for attempts on a device.
     *
     * @param device where the attempt runs
     * @return the default
     */
    public RetrySpec defaultRetry(Device device) {
        return device == Device.GPU ? gpuDefaultRetry : defaultRetry;
    }

    /** The time limit used for tasks that declare none, for attempts on the CPU. */
    public TimeLimitSpec defaultTimeLimit() {
        return defaultTimeLimit;
    }

    /**
     * The time limit used for tasks that declare none, for attempts on a device.
     *
     * @param device where the attempt runs
     * @return the default
     */
    public TimeLimitSpec defaultTimeLimit(Device device) {
        return device == Device.GPU ? gpuDefaultTimeLimit : defaultTimeLimit;
    }

    /** The application's retry registry, if one was given. */
    public Optional<RetryRegistry> retryRegistry() {
        return Optional.ofNullable(retryRegistry);
    }

    /** The application's time limiter registry, if one was given. */
    public Optional<TimeLimiterRegistry> timeLimiterRegistry() {
        return Optional.ofNullable(timeLimiterRegistry);
    }

    /**
     * A resolution scope: resolves the tasks of one graph, sharing instances between tasks of the
     * same statistics name and declaration.
     *
     * @return a new scope
     */
    public Resolution resolution() {
        return new Resolution();
    }

    /** Resolves the retries and time limits of the tasks of one graph. */
    public final class Resolution {

        private final Map<Object, Retry> retries = new HashMap<>();
        private final Map<Object, TimeLimiter> timeLimiters = new HashMap<>();

        private Resolution() {}

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
            RetrySpec spec = task.retry() != null ? task.retry() : defaultRetry(device);
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
                    : spec instanceof RetrySpec.CustomBackoff c ? checked(task, c.backoff()) : defaultBackoff;
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
            TimeLimitSpec spec = task.timeLimit() != null ? task.timeLimit() : defaultTimeLimit(device);
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
    }

    /** A fixed wait; unlike {@code IntervalFunction.of}, zero is allowed (retry at once). */
    private static IntervalFunction fixed(Duration backoff) {
        long millis = backoff.toMillis();
        return attempt -> millis;
    }

    private Retry namedRetry(Task<?> task, String name) {
        RetryRegistry registry = retryRegistry;
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
        TimeLimiterRegistry registry = timeLimiterRegistry;
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

    /** Builds a {@link FaultTolerance}. */
    public static final class Builder {

        private @Nullable RetryRegistry retryRegistry;
        private @Nullable TimeLimiterRegistry timeLimiterRegistry;
        private RetrySpec defaultRetry = RetrySpec.none();
        private @Nullable RetrySpec gpuDefaultRetry;
        private IntervalFunction defaultBackoff = fixed(Duration.ofMillis(100));
        private TimeLimitSpec defaultTimeLimit = TimeLimitSpec.none();
        private @Nullable TimeLimitSpec gpuDefaultTimeLimit;

        private Builder() {}

        /**
         * The registry for named retries ({@code TaskBuilder.retry("name")}).
         *
         * @param registry the application's registry
         * @return this builder
         */
        public Builder retryRegistry(@Nullable RetryRegistry registry) {
            this.retryRegistry = registry;
            return this;
        }

        /**
         * The registry for named time limiters.
         *
         * @param registry the application's registry
         * @return this builder
         */
        public Builder timeLimiterRegistry(@Nullable TimeLimiterRegistry registry) {
            this.timeLimiterRegistry = registry;
            return this;
        }

        /**
         * The retry of tasks that declare none.
         *
         * @param spec e.g. {@code RetrySpec.retries(2, Duration.ofMillis(50))} or
         *     {@code RetrySpec.named("hts-cpu")}
         * @return this builder
         */
        public Builder defaultRetry(RetrySpec spec) {
            this.defaultRetry = Objects.requireNonNull(spec, "spec");
            return this;
        }

        /**
         * The retry of tasks that declare none, for their attempts on a GPU (by default the same as
         * {@link #defaultRetry}): with Spring Boot, the {@code hts-gpu} instance when the
         * application configures one.
         *
         * @param spec e.g. {@code RetrySpec.named("hts-gpu")}
         * @return this builder
         */
        public Builder gpuDefaultRetry(RetrySpec spec) {
            this.gpuDefaultRetry = Objects.requireNonNull(spec, "spec");
            return this;
        }

        /**
         * The time limit of tasks that declare none, for their attempts on a GPU (by default the
         * same as {@link #defaultTimeLimit}).
         *
         * @param spec e.g. {@code TimeLimitSpec.named("hts-gpu")}
         * @return this builder
         */
        public Builder gpuDefaultTimeLimit(TimeLimitSpec spec) {
            this.gpuDefaultTimeLimit = Objects.requireNonNull(spec, "spec");
            return this;
        }

        /**
         * The backoff of tasks that declare a retry count without a backoff.
         *
         * @param backoff the wait before each retry, 0 or more
         * @return this builder
         */
        public Builder defaultBackoff(Duration backoff) {
            String problem = RetrySpec.backoffProblem(backoff);
            if (problem != null) {
                throw new IllegalArgumentException("default " + problem);
            }
            this.defaultBackoff = fixed(backoff);
            return this;
        }

        /**
         * The time limit of tasks that declare none.
         *
         * @param spec e.g. {@code TimeLimitSpec.of(Duration.ofMinutes(5))}
         * @return this builder
         */
        public Builder defaultTimeLimit(TimeLimitSpec spec) {
            this.defaultTimeLimit = Objects.requireNonNull(spec, "spec");
            return this;
        }

        /** Builds the resolver. */
        public FaultTolerance build() {
            return new FaultTolerance(this);
        }
    }
}
