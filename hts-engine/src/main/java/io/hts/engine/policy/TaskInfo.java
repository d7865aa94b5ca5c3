package io.hts.engine.policy;

import io.hts.engine.graph.Device;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What a policy knows about a ready task.
 *
 * @param name the task's name
 * @param statisticsName the name its statistics and learned costs aggregate under (its group's)
 * @param devices the devices it has a body for
 * @param priority its priority, 0 normal
 * @param cpuCostNanos its estimated CPU cost (declared, else learned), or -1 when unknown
 * @param gpuCostNanos its estimated GPU cost (declared, else learned), or -1 when unknown
 */
public record TaskInfo(
        String name, String statisticsName, Set<Device> devices, int priority, long cpuCostNanos, long gpuCostNanos) {

    /**
     * Whether the task has a body for a device.
     *
     * @param device the device
     * @return whether it can run there
     */
    public boolean canRunOn(Device device) {
        return devices.contains(device);
    }

    /**
     * The estimated cost on a device.
     *
     * @param device the device
     * @return the estimate in nanoseconds, if known
     */
    public OptionalLong estimatedCost(Device device) {
        long nanos = device == Device.CPU ? cpuCostNanos : gpuCostNanos;
        return nanos < 0 ? OptionalLong.empty() : OptionalLong.of(nanos);
    }
}
