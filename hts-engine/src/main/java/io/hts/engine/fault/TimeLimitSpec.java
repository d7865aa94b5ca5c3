package io.hts.engine.fault;

import io.github.resilience4j.timelimiter.TimeLimiter;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How long one attempt of a task may run, as declared on its builder: one of the records below,
 * made by the static factories. Resolved into a Resilience4j {@link TimeLimiter} by
 * {@link FaultTolerance}. Time-outs and names compare by value, a limiter instance by identity.
 */
public sealed interface TimeLimitSpec
        permits TimeLimitSpec.None, TimeLimitSpec.Timeout, TimeLimitSpec.Limiter, TimeLimitSpec.Named {

    /** The shortest time limit: Resilience4j schedules time-outs in whole milliseconds. */
    Duration MINIMUM = Duration.ofMillis(1);

    /**
     * The longest time limit, 36,525 days (100 years): deadlines are kept in nanoseconds, so a
     * longer one would overflow. {@link #none()} means no limit at all.
     */
    Duration MAXIMUM = Duration.ofDays(36_525);

    /** No time limit, whatever the scheduler's default. */
    static TimeLimitSpec none() {
        return None.INSTANCE;
    }

    /**
     * A time limit per attempt.
     *
     * @param timeout from {@link #MINIMUM} to {@link #MAXIMUM}
     * @return the spec
     * @throws IllegalArgumentException when out of that range (the message gives the range)
     */
    static TimeLimitSpec of(Duration timeout) {
        return new Timeout(timeout);
    }

    /**
     * A Resilience4j time limiter, shared as is.
     *
     * @param limiter the limiter
     * @return the spec
     */
    static TimeLimitSpec of(TimeLimiter limiter) {
        return new Limiter(limiter);
    }

    /**
     * A time limiter taken by name from the scheduler's {@code TimeLimiterRegistry}.
     *
     * @param instanceName the instance name, not blank
     * @return the spec
     */
    static TimeLimitSpec named(String instanceName) {
        return new Named(instanceName);
    }

    /**
     * What is wrong with a time limit, or {@code null} when it is within range.
     *
     * @param timeout a time limit
     * @return a sentence naming the accepted range and the value, or {@code null}
     */
    static @Nullable String rangeProblem(Duration timeout) {
        if (timeout.compareTo(MINIMUM) >= 0 && timeout.compareTo(MAXIMUM) <= 0) {
            return null;
        }
        return "timeout must be between 1 ms and " + MAXIMUM.toDays() + " days (100 years), was " + timeout
                + "; use noTimeout() for none";
    }

    /** Whether this spec removes any time limit. */
    default boolean isNone() {
        return this instanceof None;
    }

    /** No time limit. */
    record None() implements TimeLimitSpec {

        private static final None INSTANCE = new None();

        @Override
        public String toString() {
            return "no timeout";
        }
    }

    /**
     * A time limit per attempt.
     *
     * @param timeout from {@link #MINIMUM} to {@link #MAXIMUM}
     */
    record Timeout(Duration timeout) implements TimeLimitSpec {

        /** Checks the range. */
        public Timeout {
            String problem = rangeProblem(Objects.requireNonNull(timeout, "timeout"));
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
        }

        @Override
        public String toString() {
            return "timeout " + timeout;
        }
    }

    /**
     * A Resilience4j time limiter, shared as is, compared by identity.
     *
     * @param limiter the limiter
     */
    record Limiter(TimeLimiter limiter) implements TimeLimitSpec {

        /** Checks the limiter is there. */
        public Limiter {
            Objects.requireNonNull(limiter, "limiter");
        }

        @Override
        public String toString() {
            return "time limiter '" + limiter.getName() + "'";
        }
    }

    /**
     * A time limiter from the scheduler's registry, by name.
     *
     * @param instanceName not blank
     */
    record Named(String instanceName) implements TimeLimitSpec {

        /** Checks the name. */
        public Named {
            if (instanceName.isBlank()) {
                throw new IllegalArgumentException("a time limiter instance name must not be blank");
            }
        }

        @Override
        public String toString() {
            return "time limiter '" + instanceName + "'";
        }
    }
}
