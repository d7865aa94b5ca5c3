package io.hts.engine.policy;

import java.util.Arrays;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/** The built-in policies, by the names used in configuration ({@code hts.scheduler.policy}). */
public enum PolicyType {

    /** {@link DefaultPolicy}: earliest estimated finish. */
    DEFAULT("default", DefaultPolicy::new),

    /** {@link GpuFirstPolicy}. */
    GPU_FIRST("gpu-first", GpuFirstPolicy::new),

    /** {@link CpuFirstPolicy}. */
    CPU_FIRST("cpu-first", CpuFirstPolicy::new),

    /** {@link RoundRobinPolicy}. */
    ROUND_ROBIN("round-robin", RoundRobinPolicy::new),

    /** {@link ShortestJobFirstPolicy}. */
    SHORTEST_JOB_FIRST("shortest-job-first", ShortestJobFirstPolicy::new);

    private final String id;
    private final Supplier<SchedulingPolicy> factory;

    PolicyType(String id, Supplier<SchedulingPolicy> factory) {
        this.id = id;
        this.factory = factory;
    }

    /** The configuration name, e.g. {@code gpu-first}. */
    public String id() {
        return id;
    }

    /** A new instance of the policy. */
    public SchedulingPolicy create() {
        return factory.get();
    }

    /**
     * The policy with a configuration name (case and {@code _}/{@code -} insensitive).
     *
     * @param name e.g. {@code gpu-first}
     * @return the policy type
     * @throws IllegalArgumentException naming the value and the accepted names
     */
    public static PolicyType fromId(String name) {
        String normalized = name.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        for (PolicyType t : values()) {
            if (t.id.equals(normalized)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown scheduling policy '" + name + "'; accepted: "
                + Arrays.stream(values()).map(PolicyType::id).collect(Collectors.joining(", ")));
    }
}
