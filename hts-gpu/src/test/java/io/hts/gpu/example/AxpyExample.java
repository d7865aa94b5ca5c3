package io.hts.gpu.example;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The example of docs/gpu.md: y = 2x + y as a task with a CPU body and a GPU body, on the first
 * GPU when there is one and on the CPU otherwise. {@code DocExamples} checks that the page shows
 * it as written; {@code AxpyExampleTests} runs it (on a simulated device too).
 */
public final class AxpyExample {

    private AxpyExample() {}

    // Shown in docs/gpu.md as written (DocExamples compares them): not reformatted.
    // spotless:off
    public static void main(String[] args) {
        float[] x = new float[1 << 20];
        float[] y = new float[1 << 20];
        Arrays.fill(x, 1.5f);
        Arrays.fill(y, 1f);
        GpuBackend gpu = GpuBackend.startOnFirstDevice(total -> GpuSettings.defaults(total / 10 * 9)) // pool up to 90 %
                .orElse(null);                                     // null: no GPU (the reason is logged), CPU only
        float[] result = axpy(gpu, x, y);                          // the scheduler closes the backend
        System.out.println("y[0] = " + result[0] + " on " + (gpu != null ? gpu.name() : "the CPU"));
    }

    static float[] axpy(@Nullable GpuBackend gpu, float[] x, float[] y) {
        try (Scheduler scheduler = Scheduler.builder().gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("axpy");
            Task<float[]> axpy = g.task("axpy").bodies(
                    ctx -> cpuAxpy(x, y),                                  // the CPU body
                    ctx -> {                                               // the GPU body
                        GpuContext c = ctx.unwrap(GpuContext.class);
                        DeviceBuffer dx = c.upload(x);                     // async, through pinned staging memory
                        DeviceBuffer dy = c.upload(y);
                        c.kernels().axpy(x.length, 2f, dx, dy);            // built-in PTX kernel, on the task's stream
                        float[] out = c.download(dy, new float[y.length]); // filled when the task completes
                        c.release(dx);                                     // reused once the stream's work is done
                        c.release(dy);
                        return out;
                    });
            return scheduler.execute(g).result(axpy);
        }
    }
    // spotless:on

    /** 2x + y on the CPU, in a new array. */
    static float[] cpuAxpy(float[] x, float[] y) {
        float[] out = new float[y.length];
        for (int i = 0; i < y.length; i++) {
            out[i] = 2f * x[i] + y[i];
        }
        return out;
    }
}
