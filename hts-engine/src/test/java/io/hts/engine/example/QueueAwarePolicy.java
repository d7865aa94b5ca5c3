package io.hts.engine.example;

import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;

// The policy as docs/policies.md shows it (DocExamples compares them): not reformatted.
// spotless:off
/** The custom policy of docs/policies.md, as written there; {@code QueueAwarePolicyTests} runs it. */
public final class QueueAwarePolicy implements SchedulingPolicy {

    private final long minFreeGpuBytes;

    /** @param minFreeGpuBytes the GPU memory that must be free to send a task there */
    public QueueAwarePolicy(long minFreeGpuBytes) {
        this.minFreeGpuBytes = minFreeGpuBytes;
    }

    @Override
    public String name() {
        return "queue-aware";
    }

    @Override
    public Device selectDevice(TaskInfo task, SystemStatus status) {
        DeviceStatus gpu = status.status(Device.GPU);
        boolean gpuHasRoom = gpu != null && gpu.usable() && gpu.hasIdleCapacity()
                && (gpu.freeMemoryBytes() < 0 || gpu.freeMemoryBytes() >= minFreeGpuBytes);
        return gpuHasRoom ? Device.GPU : Device.CPU; // never queue behind a busy GPU while CPU workers wait
    }
}
// spotless:on
