package io.hts.engine.fault;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.hts.engine.graph.Device;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Turns the retry and time-limit declarations of tasks into Resilience4j {@link Retry} and
 * {@link TimeLimiter} instances, applying the scheduler's defaults and registries.
 *
 * <p>Within one graph instances are shared: every task with the same statistics name (a group's
 * members) and the same declaration uses one instance, so
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
     * The wait before each retry of a task whose retry declares no backoff ({@link
     * Builder#defaultBackoff}).
     */
    public IntervalFunction defaultBackoff() {
        return defaultBackoff;
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

        /**
         * A fixed wait; unlike {@code IntervalFunction.of}, zero is allowed (retry at once). The same
         * as {@code FaultResolution.fixed}, kept here so that this class does not depend on the
         * internal one (which depends on it).
         */
        private static IntervalFunction fixed(Duration backoff) {
            long millis = backoff.toMillis();
            return attempt -> millis;
        }
    }
}
