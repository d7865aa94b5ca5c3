package io.hts.engine.policy;

import io.hts.engine.graph.Device;

/** Runs a task on the CPU whenever it has a CPU body; on the GPU only when it has nothing else. */
public class CpuFirstPolicy implements SchedulingPolicy {

    @Override
    public String name() {
        return "cpu-first";
    }

    @Override
    public Device selectDevice(TaskInfo task, SystemStatus status) {
        Device d = DefaultPolicy.firstUsable(task, status, Device.CPU, Device.GPU);
        return d != null ? d : DefaultPolicy.fallback(task);
    }
}
