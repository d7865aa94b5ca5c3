package io.hts.engine.policy;

import io.hts.engine.graph.Device;
import org.jspecify.annotations.Nullable;

/**
 * The load-based default: the device where the task is expected to finish first, that is the
 * smallest (backlog / capacity) + estimated cost over the usable devices the task has a body for.
 *
 * <p>When the task's cost on a device is unknown (neither declared nor learned yet), the policy is
 * optimistic about an idle device (cost 0, so it gets tried and measured) and otherwise assumes
 * the cost known for another device. Ties go to the device with more free slots, then to the GPU.
 */
public class DefaultPolicy implements SchedulingPolicy {

    @Override
    public String name() {
        return "default";
    }

    @Override
    public Device selectDevice(TaskInfo task, SystemStatus status) {
        Device best = null;
        long bestFinish = Long.MAX_VALUE;
        int bestFree = Integer.MIN_VALUE;
        for (Device d : task.devices()) {
            DeviceStatus s = status.status(d);
            if (s == null || !s.usable()) {
                continue;
            }
            long finish = saturatingAdd(s.estimatedWaitNanos(), cost(task, d, s));
            int free = s.capacity() - s.running() - s.queued();
            if (best == null
                    || finish < bestFinish
                    || (finish == bestFinish && (free > bestFree || (free == bestFree && d == Device.GPU)))) {
                best = d;
                bestFinish = finish;
                bestFree = free;
            }
        }
        return best != null ? best : fallback(task);
    }

    static long cost(TaskInfo task, Device d, DeviceStatus s) {
        long own = d == Device.CPU ? task.cpuCostNanos() : task.gpuCostNanos();
        if (own >= 0) {
            return own;
        }
        if (s.hasIdleCapacity()) {
            return 0;
        }
        long other = d == Device.CPU ? task.gpuCostNanos() : task.cpuCostNanos();
        return Math.max(0, other);
    }

    static Device fallback(TaskInfo task) {
        return task.canRunOn(Device.CPU) ? Device.CPU : Device.GPU;
    }

    static @Nullable Device firstUsable(TaskInfo task, SystemStatus status, Device first, Device second) {
        if (task.canRunOn(first) && status.usable(first)) {
            return first;
        }
        if (task.canRunOn(second) && status.usable(second)) {
            return second;
        }
        return null;
    }

    private static long saturatingAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
