package io.hts.engine.policy;

import io.hts.engine.graph.Device;

/** Runs a task on the GPU whenever it has a GPU body and the GPU is usable; otherwise on the CPU. */
public class GpuFirstPolicy implements SchedulingPolicy {

    @Override
    public String name() {
        return "gpu-first";
    }

    @Override
    public Device selectDevice(TaskInfo task, SystemStatus status) {
        Device d = DefaultPolicy.firstUsable(task, status, Device.GPU, Device.CPU);
        return d != null ? d : DefaultPolicy.fallback(task);
    }
}
