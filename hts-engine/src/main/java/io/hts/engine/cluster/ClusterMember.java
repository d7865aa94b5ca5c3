package io.hts.engine.cluster;

import io.hts.engine.policy.DeviceHealth;
import java.util.Map;
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
 * @param loadByCoordinator that load by the id of the member that sent the slices (a coordinator
 *     leaves its own share out when it weighs the member: see {@link #loadFromOthers})
 */
public record ClusterMember(
        String id,
        String address,
        boolean local,
        int cpuSlots,
        int gpus,
        long freeDeviceMemory,
        DeviceHealth health,
        double load,
        Map<String, Double> loadByCoordinator) {

    /** Checks the values. */
    public ClusterMember {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(health, "health");
        loadByCoordinator = Map.copyOf(Objects.requireNonNull(loadByCoordinator, "loadByCoordinator"));
        if (cpuSlots < 1) {
            throw new IllegalArgumentException(
                    "member " + id + " (" + address + "): cpuSlots must be 1 or more, was " + cpuSlots);
        }
        if (gpus < 0 || freeDeviceMemory < 0 || !(load >= 0)) {
            throw new IllegalArgumentException("member " + id + " (" + address + "): gpus, freeDeviceMemory and"
                    + " load must be 0 or more, were " + gpus + ", " + freeDeviceMemory + ", " + load);
        }
        loadByCoordinator.forEach((coordinator, share) -> {
            if (!(share >= 0)) {
                throw new IllegalArgumentException("member " + id + " (" + address + "): the load of coordinator "
                        + coordinator + " must be 0 or more, was " + share);
            }
        });
    }

    /** A member whose load is not broken down by coordinator. */
    public ClusterMember(
            String id,
            String address,
            boolean local,
            int cpuSlots,
            int gpus,
            long freeDeviceMemory,
            DeviceHealth health,
            double load) {
        this(id, address, local, cpuSlots, gpus, freeDeviceMemory, health, load, Map.of());
    }

    /**
     * The load the other coordinators put on this member: {@link #load()} less the share of
     * {@code coordinator}'s slices. A coordinator spreads its own slices by what it gave each member
     * (within a group); counting them again through a load published up to a status interval ago
     * would weigh against the other members the slices it kept on itself never do.
     *
     * @param coordinator the id of the member that weighs this one
     * @return the slices of other coordinators running here per CPU slot, 0 or more
     */
    public double loadFromOthers(String coordinator) {
        return Math.max(0, load - loadByCoordinator.getOrDefault(coordinator, 0.0));
    }

    @Override
    public String toString() {
        return "member " + address + " (" + id + ")";
    }
}
