package io.hts.engine.fault;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How a task retries, as declared on its builder: one of the records below, made by the static
 * factories. Resolved into a Resilience4j {@link Retry} by {@link FaultTolerance} when a graph is
 * first submitted to a scheduler. Two specs are equal when they would build the same retry: counts
 * and fixed backoffs compare by value, a user's backoff function, configuration or instance by
 * identity.
 */
public sealed interface RetrySpec
        permits RetrySpec.None,
                RetrySpec.Count,
                RetrySpec.FixedBackoff,
                RetrySpec.CustomBackoff,
                RetrySpec.Configured,
                RetrySpec.Instance,
                RetrySpec.Named {

    /** The most retries: Resilience4j counts attempts (retries + 1) in an {@code int}. */
    int MAXIMUM_RETRIES = Integer.MAX_VALUE - 1;

    /** The longest fixed backoff, 36,525 days (100 years): backoffs are scheduled in milliseconds. */
    Duration MAXIMUM_BACKOFF = Duration.ofDays(36_525);

    /** The number of retries when known from the spec alone, -1 for a named instance. */
    int retries();

    /** No retry, whatever the scheduler's default. */
    static RetrySpec none() {
        return None.INSTANCE;
    }

    /**
     * A number of retries with a backoff.
     *
     * @param retries retries after the first attempt, 0 or more
     * @param backoff the wait in milliseconds before each retry, or {@code null} for the
     *     scheduler's default backoff
     * @return {@link #none()} for 0 retries, else a {@link Count} or a {@link CustomBackoff}
     */
    static RetrySpec retries(int retries, @Nullable IntervalFunction backoff) {
        requireRetries(retries);
        if (retries == 0) {
            return none();
        }
        return backoff == null ? new Count(retries) : new CustomBackoff(retries, backoff);
    }

    /**
     * A fixed wait between attempts.
     *
     * @param retries retries after the first attempt, 0 or more
     * @param backoff the wait before each retry, from 0 to {@link #MAXIMUM_BACKOFF}
     * @return {@link #none()} for 0 retries, else a {@link FixedBackoff}
     */
    static RetrySpec retries(int retries, Duration backoff) {
        requireRetries(retries);
        return retries == 0 ? none() : new FixedBackoff(retries, backoff);
    }

    /**
     * A full Resilience4j configuration (attempts, backoff, which exceptions retry).
     *
     * @param config the configuration
     * @return the spec
     */
    static RetrySpec of(RetryConfig config) {
        return new Configured(config);
    }

    /**
     * A Resilience4j retry instance, shared as is (its metrics and events aggregate every use).
     *
     * @param retry the instance
     * @return the spec
     */
    static RetrySpec of(Retry retry) {
        return new Instance(retry);
    }

    /**
     * A retry instance taken by name from the scheduler's {@code RetryRegistry} (configured, with
     * Spring Boot, under {@code resilience4j.retry.instances.<name>}).
     *
     * @param instanceName the instance name, not blank
     * @return the spec
     */
    static RetrySpec named(String instanceName) {
        return new Named(instanceName);
    }

    /**
     * What is wrong with a number of retries, or {@code null} when it is within range.
     *
     * @param retries retries after the first attempt
     * @return a sentence naming the accepted range and the value, or {@code null}
     */
    static @Nullable String retriesProblem(int retries) {
        return retries >= 0 && retries <= MAXIMUM_RETRIES
                ? null
                : "retries must be between 0 and " + MAXIMUM_RETRIES + ", was " + retries;
    }

    /**
     * What is wrong with a fixed backoff, or {@code null} when it is within range.
     *
     * @param backoff the wait before each retry
     * @return a sentence naming the accepted range and the value, or {@code null}
     */
    static @Nullable String backoffProblem(Duration backoff) {
        return !backoff.isNegative() && backoff.compareTo(MAXIMUM_BACKOFF) <= 0
                ? null
                : "retry backoff must be between 0 and " + MAXIMUM_BACKOFF.toDays() + " days (100 years), was "
                        + backoff;
    }

    private static void requireRetries(int retries) {
        String problem = retriesProblem(retries);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /** A count of retries made by a record's constructor: 1 or more (0 is {@link #none()}). */
    private static int positive(int retries) {
        requireRetries(retries);
        if (retries == 0) {
            throw new IllegalArgumentException("retries must be between 1 and " + MAXIMUM_RETRIES
                    + " here, was 0; use RetrySpec.none() for no retries");
        }
        return retries;
    }

    /** No retries. */
    record None() implements RetrySpec {

        private static final None INSTANCE = new None();

        @Override
        public int retries() {
            return 0;
        }

        @Override
        public String toString() {
            return "no retries";
        }
    }

    /**
     * A count of retries after the scheduler's default backoff.
     *
     * @param retries 1 to {@link #MAXIMUM_RETRIES}
     */
    record Count(int retries) implements RetrySpec {

        /** Checks the count. */
        public Count {
            positive(retries);
        }

        @Override
        public String toString() {
            return retries + " retries";
        }
    }

    /**
     * A count of retries with a fixed wait before each.
     *
     * @param retries 1 to {@link #MAXIMUM_RETRIES}
     * @param backoff 0 to {@link #MAXIMUM_BACKOFF}
     */
    record FixedBackoff(int retries, Duration backoff) implements RetrySpec {

        /** Checks the count and the wait. */
        public FixedBackoff {
            positive(retries);
            String problem = backoffProblem(Objects.requireNonNull(backoff, "backoff"));
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
        }

        @Override
        public String toString() {
            return retries + " retries " + backoff + " apart";
        }
    }

    /**
     * A count of retries with the user's backoff function (milliseconds before each retry, compared by identity).
     *
     * @param retries 1 to {@link #MAXIMUM_RETRIES}
     * @param backoff the wait before each retry; a negative or {@code null} answer fails the task, naming it
     */
    record CustomBackoff(int retries, IntervalFunction backoff) implements RetrySpec {

        /** Checks the count. */
        public CustomBackoff {
            positive(retries);
            Objects.requireNonNull(backoff, "backoff");
        }

        @Override
        public String toString() {
            return retries + " retries (custom backoff)";
        }
    }

    /**
     * A Resilience4j configuration, compared by identity.
     *
     * @param config the configuration
     */
    record Configured(RetryConfig config) implements RetrySpec {

        /** Checks the configuration is there. */
        public Configured {
            Objects.requireNonNull(config, "config");
        }

        @Override
        public int retries() {
            return config.getMaxAttempts() - 1;
        }

        @Override
        public String toString() {
            return retries() + " retries (custom configuration)";
        }
    }

    /**
     * A Resilience4j retry instance, shared as is, compared by identity.
     *
     * @param retry the instance
     */
    record Instance(Retry retry) implements RetrySpec {

        /** Checks the instance is there. */
        public Instance {
            Objects.requireNonNull(retry, "retry");
        }

        @Override
        public int retries() {
            return retry.getRetryConfig().getMaxAttempts() - 1;
        }

        @Override
        public String toString() {
            return "retry instance '" + retry.getName() + "'";
        }
    }

    /**
     * A retry instance from the scheduler's registry, by name.
     *
     * @param instanceName not blank
     */
    record Named(String instanceName) implements RetrySpec {

        /** Checks the name. */
        public Named {
            if (instanceName.isBlank()) {
                throw new IllegalArgumentException("a retry instance name must not be blank");
            }
        }

        @Override
        public int retries() {
            return -1;
        }

        @Override
        public String toString() {
            return "retry instance '" + instanceName + "'";
        }
    }
}
