package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.support.FakeGpuBackend;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A dual-bodied GPU task whose declared GPU memory is taken: it waits, or runs its CPU body. */
class MemoryShortageTests {

    private static final long MIB = 1L << 20;

    private static GraphRun runWithMemoryHeld(
            Scheduler s, CountDownLatch holding, CountDownLatch release, Task<?>[] dual) throws InterruptedException {
        TaskGraph g = TaskGraph.named("shortage");
        g.task("holder").resource(TaskBuilder.GPU_MEMORY, 48 * MIB).gpu(ctx -> {
            holding.countDown();
            release.await(10, TimeUnit.SECONDS);
            return "held";
        });
        dual[0] = g.task("dual")
                .after("later")
                .resource(TaskBuilder.GPU_MEMORY, 32 * MIB)
                .bodies(ctx -> "cpu", ctx -> "gpu");
        g.task("later").cpu(ctx -> {
            holding.await(10, TimeUnit.SECONDS);
            return 0;
        });
        GraphRun run = s.submit(g);
        assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
        return run;
    }

    @Test
    void runOnCpuRunsTheCpuBodyAtOnceWhenTheDeclaredGpuMemoryIsTaken() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(new FakeGpuBackend(2))
                .resource(TaskBuilder.GPU_MEMORY, 64 * MIB)
                .memoryShortage(MemoryShortage.RUN_ON_CPU)
                .build()) {
            Task<?>[] dual = new Task<?>[1];
            GraphRun run = runWithMemoryHeld(s, holding, release, dual);
            await().until(() -> run.state(dual[0]) == TaskState.SUCCEEDED);
            assertThat(run.result(dual[0])).isEqualTo("cpu");
            assertThat(s.resources().available(TaskBuilder.GPU_MEMORY)).isEqualTo(16 * MIB);
            release.countDown();
            run.await();
            assertThat(run.profile().tasks().get(1).device()).isEqualTo(Device.CPU);
            assertThat(s.resources().available(TaskBuilder.GPU_MEMORY)).isEqualTo(64 * MIB);
        }
    }

    @Test
    void waitKeepsTheTaskOnTheGpuUntilTheMemoryIsFree() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(new FakeGpuBackend(2))
                .resource(TaskBuilder.GPU_MEMORY, 64 * MIB)
                .build()) {
            assertThat(s.memoryShortage()).isEqualTo(MemoryShortage.WAIT);
            Task<?>[] dual = new Task<?>[1];
            GraphRun run = runWithMemoryHeld(s, holding, release, dual);
            await().until(() -> run.state(dual[0]) == TaskState.READY);
            release.countDown();
            run.await();
            assertThat(run.result(dual[0])).isEqualTo("gpu");
        }
    }
}
