package io.hts.autoconfigure;

import io.hts.engine.cluster.JavaSerializationCodec;
import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.util.unit.DataSize;

/**
 * Checks every {@code hts.*} property whose validity does not depend on the machine, once, at
 * start-up, whether or not a GPU is in use: a bad value fails start-up with an
 * {@link InvalidHtsPropertyException} that names the property, the value as written and what would
 * be accepted. (Checks against the machine, such as a pool larger than the GPU's memory, are made
 * where the GPU starts.)
 */
final class HtsPropertiesValidator {

    /** The most CPU workers (the pool's idle stack holds 65,534). */
    static final int MAXIMUM_THREADS = 65_534;
    /** The most events the recent-events buffer keeps. */
    static final int MAXIMUM_EVENT_BUFFER = 10_000_000;
    /** The longest duration a setting takes (100 years, as the engine's time limits and backoffs). */
    static final Duration LONGEST = Duration.ofDays(36_525);

    /** The most members a slice may be sent to. */
    static final int MAXIMUM_SLICE_ATTEMPTS = 100;

    /** hts-cluster's engine, which hts.cluster.enabled needs on the class path. */
    static final String ENGINE = "io.hts.cluster.HazelcastClusterEngine";

    /** Hazelcast, which hts-cluster brings. */
    static final String HAZELCAST = "com.hazelcast.core.HazelcastInstance";

    /** The smallest block of the GPU memory pool (hts-gpu's buddy allocator). */
    static final long MINIMUM_BLOCK = 256;

    private final Environment environment;

    private HtsPropertiesValidator(Environment environment) {
        this.environment = environment;
    }

    /** Properties that passed {@link #validate}: a bean the beans that use them depend on. */
    record Checked(HtsProperties properties) {}

    static Checked validate(HtsProperties p, Environment environment) {
        new HtsPropertiesValidator(environment).check(p);
        return new Checked(p);
    }

    private void check(HtsProperties p) {
        Integer threads = p.getExecutor().getThreads();
        require(
                threads == null || (threads >= 1 && threads <= MAXIMUM_THREADS),
                "hts.executor.threads",
                threads,
                "an integer from 1 to " + MAXIMUM_THREADS + " (unset: the number of available processors)");
        Duration stall = p.getScheduler().getStallTimeout();
        require(
                stall == null || (stall.compareTo(Duration.ofMillis(10)) >= 0 && stall.compareTo(LONGEST) <= 0),
                "hts.scheduler.stall-timeout",
                stall,
                "a duration from 10ms to " + LONGEST.toDays() + "d, such as 30s, or unset for no watchdog");
        require(
                p.getScheduler().getFailedRunsLoggedPerMinute() >= 0,
                "hts.scheduler.failed-runs-logged-per-minute",
                p.getScheduler().getFailedRunsLoggedPerMinute(),
                "an integer of 0 (none logged) or more");
        tasks(p.getTasks());
        require(
                p.getProfiling().getRetainedRuns() >= 0,
                "hts.profiling.retained-runs",
                p.getProfiling().getRetainedRuns(),
                "an integer of 0 or more");
        require(
                !p.getProfiling().getRetainedSize().isNegative(),
                "hts.profiling.retained-size",
                p.getProfiling().getRetainedSize(),
                "a size of 0 or more, such as 64MB");
        require(
                p.getEvents().getBufferSize() >= 0 && p.getEvents().getBufferSize() <= MAXIMUM_EVENT_BUFFER,
                "hts.events.buffer-size",
                p.getEvents().getBufferSize(),
                "an integer from 0 to " + MAXIMUM_EVENT_BUFFER
                        + " (each kept event holds its text: a million is tens of MB)");
        Duration stream = p.getEvents().getStreamTimeout();
        require(
                !stream.isNegative() && !stream.isZero() && stream.compareTo(LONGEST) <= 0,
                "hts.events.stream-timeout",
                stream,
                "a duration above 0 and at most " + LONGEST.toDays() + "d, such as 30m");
        gpu(p.getGpu());
        cluster(p.getCluster());
    }

    private void tasks(HtsProperties.Tasks tasks) {
        require(
                tasks.getDefaultRetries() >= 0 && tasks.getDefaultRetries() <= RetrySpec.MAXIMUM_RETRIES,
                "hts.tasks.default-retries",
                tasks.getDefaultRetries(),
                "an integer from 0 to " + RetrySpec.MAXIMUM_RETRIES);
        Duration timeout = tasks.getDefaultTimeout();
        require(
                timeout == null
                        || (timeout.compareTo(TimeLimitSpec.MINIMUM) >= 0
                                && timeout.compareTo(TimeLimitSpec.MAXIMUM) <= 0),
                "hts.tasks.default-timeout",
                timeout,
                "a duration from " + TimeLimitSpec.MINIMUM.toMillis() + "ms to " + TimeLimitSpec.MAXIMUM.toDays()
                        + "d, such as 30s, or unset for none");
        Duration backoff = tasks.getDefaultBackoff();
        require(
                !backoff.isNegative() && backoff.compareTo(RetrySpec.MAXIMUM_BACKOFF) <= 0,
                "hts.tasks.default-backoff",
                backoff,
                "a duration from 0 to " + RetrySpec.MAXIMUM_BACKOFF.toDays() + "d, such as 100ms");
    }

    private void gpu(GpuProperties gpu) {
        require(
                gpu.getStreamsPerDevice() >= 1,
                "hts.gpu.streams-per-device",
                gpu.getStreamsPerDevice(),
                "an integer of at least 1, such as 4 (the default)");
        require(
                !gpu.getPollSpin().isNegative() && gpu.getPollSpin().compareTo(LONGEST) <= 0,
                "hts.gpu.poll-spin",
                gpu.getPollSpin(),
                "a duration of 0 or more, such as 50us (the default) or 20ms");
        List<Integer> devices = gpu.getDevices();
        if (devices != null) {
            Set<Integer> seen = new HashSet<>();
            for (Integer d : devices) {
                require(
                        d != null && d >= 0 && seen.add(d),
                        "hts.gpu.devices",
                        devices,
                        "distinct device ordinals of 0 or more, such as 0,1, or unset for every GPU");
            }
        }
        GpuProperties.CircuitBreaker breaker = gpu.getCircuitBreaker();
        float threshold = breaker.getFailureRateThreshold();
        require(
                threshold > 0 && threshold <= 100,
                "hts.gpu.circuit-breaker.failure-rate-threshold",
                threshold,
                "a percentage above 0 and at most 100, such as 50");
        require(
                breaker.getSlidingWindowSize() >= 1,
                "hts.gpu.circuit-breaker.sliding-window-size",
                breaker.getSlidingWindowSize(),
                "an integer of at least 1, such as 20");
        require(
                breaker.getWaitDurationInOpenState().compareTo(Duration.ofMillis(1)) >= 0
                        && breaker.getWaitDurationInOpenState().compareTo(LONGEST) <= 0,
                "hts.gpu.circuit-breaker.wait-duration-in-open-state",
                breaker.getWaitDurationInOpenState(),
                "a duration of at least 1ms, such as 30s");
        GpuProperties.MemoryPool pool = gpu.getMemoryPool();
        long block = pool.getMinimumBlock().toBytes();
        require(
                block >= MINIMUM_BLOCK && Long.bitCount(block) == 1,
                "hts.gpu.memory-pool.minimum-block",
                pool.getMinimumBlock(),
                "a power of two of at least 256B, such as 256B (the default) or 4KB");
        long arena = pool.getArenaSize().toBytes();
        require(
                arena >= block && Long.bitCount(arena) == 1,
                "hts.gpu.memory-pool.arena-size",
                pool.getArenaSize(),
                "a power of two of at least the minimum block ("
                        + pool.getMinimumBlock().toBytes() + "B), such as 256MB (the default) or 512MB");
        require(
                !pool.getInitial().isNegative(),
                "hts.gpu.memory-pool.initial",
                pool.getInitial(),
                "a size of 0 or more, such as 256MB");
        DataSize maximum = pool.getMaximum();
        require(
                maximum == null || (maximum.toBytes() >= pool.getInitial().toBytes() && maximum.toBytes() >= block),
                "hts.gpu.memory-pool.maximum",
                maximum,
                "a size of at least hts.gpu.memory-pool.initial ("
                        + pool.getInitial().toBytes() + "B) and of the minimum block, such as 8GB, or unset for 90 %"
                        + " of the device's memory");
    }

    private void cluster(ClusterProperties cluster) {
        require(
                !cluster.isEnabled()
                        || (ClassUtils.isPresent(ENGINE, ClassUtils.getDefaultClassLoader())
                                && ClassUtils.isPresent(HAZELCAST, ClassUtils.getDefaultClassLoader())),
                "hts.cluster.enabled",
                true,
                "false without hts-cluster on the class path: add io.hts:hts-cluster (it brings Hazelcast)"
                        + " and a Hazelcast member (spring-boot-hazelcast and a Hazelcast configuration)");
        DataSize inline = cluster.getInlineLimit();
        require(
                !inline.isNegative() && inline.toBytes() <= Integer.MAX_VALUE,
                "hts.cluster.inline-limit",
                inline,
                "a size from 0B (every payload by reference) to 2047MB, such as 64KB (the default)");
        Duration roundTrip = cluster.getRoundTrip();
        require(
                !roundTrip.isNegative() && !roundTrip.isZero() && roundTrip.compareTo(Duration.ofMinutes(1)) <= 0,
                "hts.cluster.round-trip",
                roundTrip,
                "a duration above 0 and at most 1m, such as 800us (loopback, the default) or 2ms");
        require(
                cluster.getOverhead() > 0 && cluster.getOverhead() < 1,
                "hts.cluster.overhead",
                cluster.getOverhead(),
                "a share above 0 and below 1, such as 0.05 (5 %, the default)");
        require(
                cluster.getSliceAttempts() >= 1 && cluster.getSliceAttempts() <= MAXIMUM_SLICE_ATTEMPTS,
                "hts.cluster.slice-attempts",
                cluster.getSliceAttempts(),
                "an integer from 1 to " + MAXIMUM_SLICE_ATTEMPTS + ", such as 3 (the default)");
        require(
                cluster.getMinimumMembers() >= 1,
                "hts.cluster.minimum-members",
                cluster.getMinimumMembers(),
                "an integer of at least 1, such as 3 for a cluster of three members");
        List<String> allowed = cluster.getAllowedClasses();
        for (String pattern : allowed != null ? allowed : List.<String>of()) {
            boolean valid;
            try {
                JavaSerializationCodec.allowing(pattern);
                valid = true;
            } catch (RuntimeException ex) {
                valid = false;
            }
            require(
                    valid,
                    "hts.cluster.allowed-classes",
                    allowed,
                    "packages (com.example.sweep.*), package trees (com.example.**) or class names, comma-separated;"
                            + " no exclusions (!) or limits (maxdepth=)");
        }
        ClusterProperties.Hazelcast hz = cluster.getHazelcast();
        String[][] names = {
            {"hts.cluster.hazelcast.executor-name", hz.getExecutorName()},
            {"hts.cluster.hazelcast.members-map", hz.getMembersMap()},
            {"hts.cluster.hazelcast.payload-map", hz.getPayloadMap()}
        };
        for (String[] name : names) {
            require(!name[1].isBlank(), name[0], name[1], "a name that is not blank, the same on every member");
        }
        require(
                !hz.getMembersMap().equals(hz.getPayloadMap()),
                "hts.cluster.hazelcast.payload-map",
                hz.getPayloadMap(),
                "a map name other than hts.cluster.hazelcast.members-map (" + hz.getMembersMap()
                        + "), such as hts-payloads (the default)");
        Duration ttl = hz.getPayloadTimeToLive();
        require(
                ttl.toSeconds() >= 1 && ttl.compareTo(Duration.ofDays(365)) <= 0,
                "hts.cluster.hazelcast.payload-time-to-live",
                ttl,
                "a duration from 1s to 365d, such as 10m (the default)");
        Duration interval = hz.getStatusInterval();
        require(
                interval.compareTo(Duration.ofMillis(10)) >= 0 && interval.compareTo(Duration.ofHours(1)) <= 0,
                "hts.cluster.hazelcast.status-interval",
                interval,
                "a duration from 10ms to 1h, such as 1s (the default)");
    }

    /**
     * Fails with the property's value as written (an environment variable's or a file's text, not
     * the bound object's form: {@code -1s}, not {@code PT-1S}).
     */
    private void require(boolean valid, String property, @Nullable Object bound, String accepted) {
        if (!valid) {
            String written = environment.getProperty(property);
            throw new InvalidHtsPropertyException(
                    property, written != null ? written : String.valueOf(bound), accepted);
        }
    }
}
