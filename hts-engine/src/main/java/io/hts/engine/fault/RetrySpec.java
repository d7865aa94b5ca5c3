package io.hts.engine.fault;

import java.time.Duration;
import java.util.Objects;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import org.jspecify.annotations.Nullable;

/**
 * How a task retries, as declared on its builder. Resolved into a Resilience4j {@link Retry} by
 * {@link FaultTolerance} when a graph is first submitted to a scheduler.
 */
public final class RetrySpec {

    private static final RetrySpec NONE = new RetrySpec(Kind.NONE, 0, null, null, null, null);

    /** The most retries: Resilience4j counts attempts (retries + 1) in an {@code int}. */
    public static final int MAXIMUM_RETRIES = Integer.MAX_VALUE - 1;

    /** The longest fixed backoff, 36,525 days (100 years): backoffs are scheduled in milliseconds. */
    public static final Duration MAXIMUM_BACKOFF = Duration.ofDays(36_525);

    private final Kind kind;
    private final int retries;
    private final @Nullable IntervalFunction backoff;
    private final @Nullable RetryConfig config;
    private final @Nullable Retry retry;
    private final @Nullable String instanceName;
    private final @Nullable Duration fixedBackoff;

    private RetrySpec(Kind kind, int retries, @Nullable IntervalFunction backoff, @Nullable RetryConfig config,
            @Nullable Retry retry, @Nullable String instanceName) {
        this(kind, retries, backoff, config, retry, instanceName, null);
    }

    private RetrySpec(Kind kind, int retries, @Nullable IntervalFunction backoff, @Nullable RetryConfig config,
            @Nullable Retry retry, @Nullable String instanceName, @Nullable Duration fixedBackoff) {
        this.fixedBackoff = fixedBackoff;
        this.kind = kind;
        this.retries = retries;
        this.backoff = backoff;
        this.config = config;
        this.retry = retry;
        this.instanceName = instanceName;
    }

    /** No retry, whatever the scheduler's default. */
    public static RetrySpec none() {
        return NONE;
    }

    /**
     * A number of retries with a backoff.
     *
     * @param retries retries after the first attempt, 0 or more
     * @param backoff the wait before each retry, or {@code null} for the scheduler's default backoff
     * @return the spec
     */
    public static RetrySpec retries(int retries, @Nullable IntervalFunction backoff) {
        String problem = retriesProblem(retries);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return retries == 0 ? NONE : new RetrySpec(Kind.COUNT, retries, backoff, null, null, null);
    }

    /**
     * A fixed wait between attempts.
     *
     * @param retries retries after the first attempt
     * @param backoff the wait before each retry, 0 or more
     * @return the spec
     */
    public static RetrySpec retries(int retries, Duration backoff) {
        String problem = retriesProblem(retries);
        if (problem == null) {
            problem = backoffProblem(backoff);
        }
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return retries == 0 ? NONE
                : new RetrySpec(Kind.COUNT, retries, fixed(backoff), null, null, null, backoff);
    }

    /**
     * A full Resilience4j configuration (attempts, backoff, which exceptions retry).
     *
     * @param config the configuration
     * @return the spec
     */
    public static RetrySpec of(RetryConfig config) {
        return new RetrySpec(Kind.CONFIG, config.getMaxAttempts() - 1, null, Objects.requireNonNull(config), null,
                null);
    }

    /**
     * A Resilience4j retry instance, shared as is (its metrics and events aggregate every use).
     *
     * @param retry the instance
     * @return the spec
     */
    public static RetrySpec of(Retry retry) {
        return new RetrySpec(Kind.INSTANCE, retry.getRetryConfig().getMaxAttempts() - 1, null, null,
                Objects.requireNonNull(retry), null);
    }

    /**
     * A retry instance taken by name from the scheduler's {@code RetryRegistry} (configured, with
     * Spring Boot, under {@code resilience4j.retry.instances.<name>}).
     *
     * @param instanceName the instance name
     * @return the spec
     */
    public static RetrySpec named(String instanceName) {
        if (instanceName.isBlank()) {
            throw new IllegalArgumentException("a retry instance name must not be blank");
        }
        return new RetrySpec(Kind.NAMED, -1, null, null, null, instanceName);
    }

    /**
     * What is wrong with a number of retries, or {@code null} when it is within range.
     *
     * @param retries retries after the first attempt
     * @return a sentence naming the accepted range and the value, or {@code null}
     */
    public static @Nullable String retriesProblem(int retries) {
        return retries >= 0 && retries <= MAXIMUM_RETRIES ? null
                : "retries must be between 0 and " + MAXIMUM_RETRIES + ", was " + retries;
    }

    /**
     * What is wrong with a fixed backoff, or {@code null} when it is within range.
     *
     * @param backoff the wait before each retry
     * @return a sentence naming the accepted range and the value, or {@code null}
     */
    public static @Nullable String backoffProblem(Duration backoff) {
        return !backoff.isNegative() && backoff.compareTo(MAXIMUM_BACKOFF) <= 0 ? null
                : "retry backoff must be between 0 and " + MAXIMUM_BACKOFF.toDays() + " days (100 years), was "
                        + backoff;
    }

    /**
     * A fixed wait; unlike {@code IntervalFunction.of}, zero is allowed (retry at once).
     *
     * @param backoff the wait, 0 or more
     * @return the interval function
     */
    static IntervalFunction fixed(Duration backoff) {
        long millis = backoff.toMillis();
        return attempt -> millis;
    }

    /** What kind of spec this is. */
    public Kind kind() {
        return kind;
    }

    /** The number of retries when known from the spec alone, -1 for a named instance. */
    public int retries() {
        return retries;
    }

    @Nullable IntervalFunction backoff() {
        return backoff;
    }

    @Nullable RetryConfig config() {
        return config;
    }

    @Nullable Retry retry() {
        return retry;
    }

    @Nullable String instanceName() {
        return instanceName;
    }

    /** Specs are equal when they would build the same retry (a fixed backoff compares by value). */
    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof RetrySpec other) || other.kind != kind || other.retries != retries) {
            return false;
        }
        boolean sameBackoff = fixedBackoff != null ? fixedBackoff.equals(other.fixedBackoff)
                : other.fixedBackoff == null && backoff == other.backoff;
        return sameBackoff && config == other.config && retry == other.retry
                && Objects.equals(instanceName, other.instanceName);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, retries, fixedBackoff != null ? fixedBackoff : System.identityHashCode(backoff),
                instanceName);
    }

    @Override
    public String toString() {
        return switch (kind) {
            case NONE -> "no retries";
            case COUNT -> retries + " retries";
            case CONFIG -> retries + " retries (custom configuration)";
            case INSTANCE -> "retry instance '" + Objects.requireNonNull(retry).getName() + "'";
            case NAMED -> "retry instance '" + instanceName + "'";
        };
    }

    /** The ways a retry can be declared. */
    public enum Kind {
        /** No retries. */
        NONE,
        /** A count and a backoff. */
        COUNT,
        /** A Resilience4j configuration. */
        CONFIG,
        /** A Resilience4j instance. */
        INSTANCE,
        /** An instance from the scheduler's registry, by name. */
        NAMED
    }
}
