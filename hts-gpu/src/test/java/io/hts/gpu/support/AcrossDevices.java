package io.hts.gpu.support;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;

/**
 * A graph whose second task, on GPU 1, reads a buffer the first wrote on GPU 0: {@code first}
 * fills 4 bytes with 5, {@code second} brings them over, doubles them and downloads 10. Used where
 * work ordered across devices is under test.
 *
 * @param graph the graph, named {@code across}
 * @param first the task on device 0
 * @param second the task on device 1 that reads it
 */
public record AcrossDevices(TaskGraph graph, Task<DeviceBuffer> first, Task<float[]> second) {

    /** A new graph of the two tasks. */
    public static AcrossDevices build() {
        TaskGraph g = TaskGraph.named("across");
        Task<DeviceBuffer> first = g.task("first").onGpu(0).gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.allocate(4);
            c.kernels().fill(1, 5f, b);
            return b;
        });
        Task<float[]> second = g.task("second").after(first).onGpu(1).gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer here = c.onThisDevice(ctx.input(first));
            c.kernels().scale(1, 2f, here);
            return c.download(here, new float[1]);
        });
        return new AcrossDevices(g, first, second);
    }
}
