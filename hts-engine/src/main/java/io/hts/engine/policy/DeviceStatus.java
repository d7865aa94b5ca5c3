package io.hts.engine.policy;

import io.hts.engine.graph.Device;

/**
 * The load of one device as the policies see it.
 *
 * @param device the device
 * @param health whether it takes work
 * @param capacity how many tasks it runs at once (CPU workers, GPU streams)
 * @param queued tasks waiting for it
 * @param running tasks running on it
 * @param backlogNanos estimated work queued and running, in nanoseconds of device time
 * @param freeMemoryBytes free device memory, or -1 when not applicable
 * @param detail a human-readable note (the reason when not UP)
 */
public record DeviceStatus(
        Device device,
        DeviceHealth health,
        int capacity,
        int queued,
        int running,
        long backlogNanos,
        long freeMemoryBytes,
        String detail) {

    /** Whether the device can take a task now. */
    public boolean usable() {
        return health != DeviceHealth.DOWN && capacity > 0;
    }

    /** The estimated wait before a newly queued task starts: backlog spread over the capacity. */
    public long estimatedWaitNanos() {
        return capacity <= 0 ? Long.MAX_VALUE : backlogNanos / capacity;
    }

    /** Whether a slot is free and nothing is queued. */
    public boolean hasIdleCapacity() {
        return queued == 0 && running < capacity;
    }
}
