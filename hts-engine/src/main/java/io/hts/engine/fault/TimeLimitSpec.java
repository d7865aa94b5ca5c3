package io.hts.engine.fault;

import java.time.Duration;
import java.util.Objects;

import io.github.resilience4j.timelimiter.TimeLimiter;
import org.jspecify.annotations.Nullable;

/**
 * How long one attempt of a task may run, as declared on its builder. Resolved into a
 * Resilience4j {@link TimeLimiter} by {@link FaultTolerance}.
 */
public final class TimeLimitSpec {

    /** The shortest time limit: Resilience4j schedules time-outs in whole milliseconds. */
    public static final Duration MINIMUM = Duration.ofMillis(1);

    /**
     * The longest time limit, 36,525 days (100 years): deadlines are kept in nanoseconds, so a
     * longer one would overflow. {@link #none()} means no limit at all.
     */
    public static final Duration MAXIMUM = Duration.ofDays(36_525);

    private static final TimeLimitSpec NONE = new TimeLimitSpec(null, null, null);

    private final @Nullable Duration timeout;
    private final @Nullable TimeLimiter limiter;
    private final @Nullable String instanceName;

    private TimeLimitSpec(@Nullable Duration timeout, @Nullable TimeLimiter limiter, @Nullable String instanceName) {
        this.timeout = timeout;
        this.limiter = limiter;
        this.instanceName = instanceName;
    }

    /** No time limit, whatever the scheduler's default. */
    public static TimeLimitSpec none() {
        return NONE;
    }

    /**
     * A time limit per attempt.
     *
     * @param timeout from {@link #MINIMUM} to {@link #MAXIMUM}
     * @return the spec
     * @throws IllegalArgumentException when out of that range (the message gives the range)
     */
    public static TimeLimitSpec of(Duration timeout) {
        String problem = rangeProblem(timeout);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return new TimeLimitSpec(timeout, null, null);
    }

    /**
     * What is wrong with a time limit, or {@code null} when it is within range.
     *
     * @param timeout a time limit
     * @return a sentence naming the accepted range and the value, or {@code null}
     */
    public static @Nullable String rangeProblem(Duration timeout) {
        if (timeout.compareTo(MINIMUM) >= 0 && timeout.compareTo(MAXIMUM) <= 0) {
            return null;
        }
        return "timeout must be between 1 ms and " + MAXIMUM.toDays() + " days (100 years), was " + timeout
                + "; use noTimeout() for none";
    }

    /**
     * A Resilience4j time limiter, shared as is.
     *
     * @param limiter the limiter
     * @return the spec
     */
    public static TimeLimitSpec of(TimeLimiter limiter) {
        return new TimeLimitSpec(null, Objects.requireNonNull(limiter), null);
    }

    /**
     * A time limiter taken by name from the scheduler's {@code TimeLimiterRegistry}.
     *
     * @param instanceName the instance name
     * @return the spec
     */
    public static TimeLimitSpec named(String instanceName) {
        if (instanceName.isBlank()) {
            throw new IllegalArgumentException("a time limiter instance name must not be blank");
        }
        return new TimeLimitSpec(null, null, instanceName);
    }

    /** Whether this spec removes any time limit. */
    public boolean isNone() {
        return this == NONE;
    }

    @Nullable Duration timeout() {
        return timeout;
    }

    @Nullable TimeLimiter limiter() {
        return limiter;
    }

    @Nullable String instanceName() {
        return instanceName;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TimeLimitSpec other && Objects.equals(timeout, other.timeout) && limiter == other.limiter
                && Objects.equals(instanceName, other.instanceName);
    }

    @Override
    public int hashCode() {
        return Objects.hash(timeout, System.identityHashCode(limiter), instanceName);
    }

    @Override
    public String toString() {
        if (timeout != null) {
            return "timeout " + timeout;
        }
        if (limiter != null) {
            return "time limiter '" + limiter.getName() + "'";
        }
        return instanceName != null ? "time limiter '" + instanceName + "'" : "no timeout";
    }
}
