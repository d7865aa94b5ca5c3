package io.hts.engine.cluster;

import io.hts.engine.policy.DeviceHealth;
import java.util.Objects;

/**
 * A member of the cluster that serves HTS work, and its capacities as it last published them.
 *
 * @param id the member's id, unique in the cluster (Hazelcast: the member's UUID)
 * @param address where it is reached, for people (e.g. {@code 127.0.0.1:5701})
 * @param local whether it is this JVM
 * @param cpuSlots the CPU workers of its scheduler
 * @param gpus the GPUs of its scheduler that are not DOWN, 0 without a GPU backend
 * @param freeDeviceMemory free GPU memory in bytes, summed over its GPUs; 0 without
 * @param health whether it takes work: {@code UP}; {@code DEGRADED} takes work last; {@code DOWN}
 *     none
 * @param load the slices it is running per CPU slot, 0 when idle
 */
public record ClusterMember(
        String id,
        String address,
        boolean local,
        int cpuSlots,
        int gpus,
        long freeDeviceMemory,
        DeviceHealth health,
        double load) {

    /** Checks the values. */
    public ClusterMember {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(health, "health");
        if (cpuSlots < 1) {
            throw new IllegalArgumentException(
                    "member " + id + " (" + address + "): cpuSlots must be 1 or more, was " + cpuSlots);
        }
        if (gpus < 0 || freeDeviceMemory < 0 || !(load >= 0)) {
            throw new IllegalArgumentException("member " + id + " (" + address + "): gpus, freeDeviceMemory and"
                    + " load must be 0 or more, were " + gpus + ", " + freeDeviceMemory + ", " + load);
        }
    }

    @Override
    public String toString() {
        return "member " + address + " (" + id + ")";
    }
}
