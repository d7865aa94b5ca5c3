package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.PoolSettings;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A task's declared {@code gpu-memory} reservation lasts as long as the device buffer it returns:
 * a task admitted against the reservation never finds the memory still taken half-way.
 */
class GpuMemoryReservationTests {

    private static final long MIB = 1L << 20;
    private static final String GPU_MEMORY = "gpu-memory";

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    /** A pool of one 64 MiB arena: two 40 MiB buffers never fit at once. */
    private Scheduler scheduler() {
        GpuSettings settings = GpuSettings.defaults(64 * MIB)
                .withStreams(2)
                .withMemory(new PoolSettings(64 * MIB, 64 * MIB, 64 * MIB, 256));
        GpuBackend gpu = cuda.backend(settings);
        return Scheduler.builder()
                .threads(2)
                .gpuBackend(gpu)
                .resource(GPU_MEMORY, 64 * MIB)
                .build();
    }

    private static TaskGraph producing(String name) {
        TaskGraph g = TaskGraph.named(name);
        g.task("produce").resource(GPU_MEMORY, 40 * MIB).gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.allocate(40 * MIB);
            c.kernels().fill(16, 1f, b);
            return b;
        });
        return g;
    }

    private static TaskGraph needing40MiB() {
        TaskGraph g = TaskGraph.named("needs-40-mib");
        g.task("scratch").resource(GPU_MEMORY, 40 * MIB).gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            c.kernels().fill(16, 2f, c.scratch(40 * MIB));
            return 2f;
        });
        return g;
    }

    @Test
    void theReservationOfAReturnedBufferLastsUntilTheCallerClosesIt() throws Exception {
        try (Scheduler s = scheduler()) {
            TaskGraph g = producing("leaf-buffer");
            GraphRun first = s.execute(g);
            @SuppressWarnings("unchecked")
            DeviceBuffer kept =
                    (DeviceBuffer) first.result((Task<Object>) g.tasks().get(0));
            assertThat(s.resources().available(GPU_MEMORY))
                    .as("the caller's buffer still holds 40 MiB")
                    .isEqualTo(24 * MIB);

            GraphRun second = s.submit(needing40MiB());
            await().during(Duration.ofMillis(150))
                    .atMost(Duration.ofSeconds(2))
                    .until(() -> !second.isDone() && second.states().get("scratch") == TaskState.READY);
            kept.close();
            second.await(Duration.ofSeconds(10));
            assertThat(second.states()).containsEntry("scratch", TaskState.SUCCEEDED);
            assertThat(s.resources().available(GPU_MEMORY)).isEqualTo(64 * MIB);
        }
    }

    @Test
    void theReservationOfAnIntermediateBufferLastsUntilTheRunReleasesIt() throws Exception {
        try (Scheduler s = scheduler()) {
            TaskGraph g = producing("intermediate-buffer");
            @SuppressWarnings("unchecked")
            Task<DeviceBuffer> produce = (Task<DeviceBuffer>) g.tasks().get(0);
            Task<float[]> read = g.task("read")
                    .after(produce)
                    .gpu(ctx -> ctx.unwrap(GpuContext.class).download(ctx.input(produce), new float[4]));
            // while the intermediate buffer lives, a 40 MiB task waits instead of failing half-way
            GraphRun run = s.submit(g);
            GraphRun other = s.submit(needing40MiB());
            assertThat(run.await(Duration.ofSeconds(10)).result(read)).containsExactly(1f, 1f, 1f, 1f);
            other.await(Duration.ofSeconds(10));
            assertThat(other.states()).containsEntry("scratch", TaskState.SUCCEEDED);
            await().atMost(Duration.ofSeconds(5)).until(() -> s.resources().available(GPU_MEMORY) == 64 * MIB);
        }
    }
}
