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
     * @param timeout at least {@link #MINIMUM}
     * @return the spec
     */
    public static TimeLimitSpec of(Duration timeout) {
        if (timeout.compareTo(MINIMUM) < 0) {
            throw new IllegalArgumentException("a timeout must be at least " + MINIMUM.toMillis() + " ms, was "
                    + timeout.toNanos() + " ns");
        }
        return new TimeLimitSpec(timeout, null, null);
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
