package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.PoolSettings;
import io.hts.gpu.support.AcrossDevices;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Placement and data flow across the GPUs of one host, on two simulated devices. */
class MultiGpuBackendTests {

    private static final long MIB = 1L << 20;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB).withDevices(2);

    private MultiGpuBackend twoGpus(int streams) {
        GpuSettings settings = GpuSettings.defaults(32 * MIB)
                .withStreams(streams)
                .withMemory(new PoolSettings(4 * MIB, 32 * MIB, 4 * MIB, 256));
        return cuda.backends(settings);
    }

    @Test
    void independentTasksSpreadOverTheDevicesByLoad() {
        cuda.autoRun(false);
        MultiGpuBackend gpus = twoGpus(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpus).build()) {
            Set<Integer> seen = ConcurrentHashMap.newKeySet();
            TaskGraph g = TaskGraph.named("spread");
            g.group(
                    "k",
                    8,
                    (i, t) -> t.gpu(ctx -> {
                        GpuContext c = ctx.unwrap(GpuContext.class);
                        seen.add(c.deviceOrdinal());
                        c.kernels().fill(1, i, c.scratch(4));
                        return c.deviceOrdinal();
                    }));
            GraphRun run;
            try {
                run = s.submit(g);
                await().atMost(Duration.ofSeconds(5)).until(() -> gpus.status().running() == 4);
                assertThat(gpus.status().capacity()).as("both devices' streams").isEqualTo(4);
                assertThat(gpus.placements()[0]).isPositive();
                assertThat(gpus.placements()[1]).isPositive();
            } finally {
                cuda.autoRun(true);
            }
            run.await();
            assertThat(seen).containsExactlyInAnyOrder(0, 1);
            assertThat(gpus.placements()[0] + gpus.placements()[1]).isEqualTo(8);
        }
    }

    @Test
    void aTaskGoesWhereItsInputBufferIsAndABufferFromAnotherDeviceIsCopiedOver() {
        MultiGpuBackend gpus = twoGpus(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpus).build()) {
            TaskGraph g = TaskGraph.named("data");
            Task<DeviceBuffer> onOne = g.task("produce-on-1").onGpu(1).gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.allocate(4 * 64);
                c.kernels().fill(64, 3f, b);
                return b;
            });
            int[] consumerDevice = new int[2];
            Task<float[]> follows = g.task("follow-the-data").after(onOne).gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                consumerDevice[0] = c.deviceOrdinal();
                DeviceBuffer in = c.onThisDevice(ctx.input(onOne));
                return c.download(in, new float[1]);
            });
            Task<float[]> pinnedElsewhere = g.task("pinned-to-0")
                    .after(onOne)
                    .onGpu(0)
                    .gpu(ctx -> {
                        GpuContext c = ctx.unwrap(GpuContext.class);
                        consumerDevice[1] = c.deviceOrdinal();
                        DeviceBuffer local = c.onThisDevice(ctx.input(onOne));
                        assertThat(local.device()).isZero();
                        c.kernels().scale(64, 2f, local);
                        return c.download(local, new float[64]);
                    });
            GraphRun run = s.execute(g);
            assertThat(consumerDevice).containsExactly(1, 0);
            assertThat(run.result(follows)).containsExactly(3f);
            assertThat(run.result(pinnedElsewhere)).containsOnly(6f);
            assertThat(cuda.peerCopies())
                    .as("only the task on the other device copied")
                    .isOne();
            assertThat(run.result(onOne).isReleased()).isTrue();
        }
    }

    @Test
    void aTaskOnOneDeviceFollowsItsPredecessorsWorkOnTheOtherOnTheDevice() {
        cuda.autoRun(false);
        MultiGpuBackend gpus = twoGpus(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpus).build()) {
            AcrossDevices across = AcrossDevices.build();
            TaskGraph g = across.graph();
            Task<DeviceBuffer> first = across.first();
            Task<float[]> second = across.second();
            GraphRun run;
            try {
                run = s.submit(g);
                await().atMost(Duration.ofSeconds(5))
                        .until(() -> gpus.devices().get(1).status().running() == 1);
                assertThat(run.state(first))
                        .as("enqueued on cuda:1 before cuda:0's work ran")
                        .isNotEqualTo(TaskState.SUCCEEDED);
            } finally {
                cuda.autoRun(true);
            }
            run.await();
            assertThat(run.result(second)).containsExactly(10f);
        }
    }

    /**
     * A follower on cuda:1 is never reported complete before the task it follows on cuda:0, even
     * when cuda:0's launcher is slow to report it (its completion action holds it up): the
     * follower's own completion action, the last step before its report, sees its predecessor
     * SUCCEEDED every time.
     */
    @Test
    void aFollowerOnAnotherDeviceNeverCompletesBeforeThePredecessorItFollows() throws Exception {
        MultiGpuBackend gpus = twoGpus(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpus).build()) {
            for (int round = 0; round < 5; round++) {
                java.util.concurrent.CountDownLatch followerDone = new java.util.concurrent.CountDownLatch(1);
                AtomicReference<TaskState> seen = new AtomicReference<>();
                AtomicReference<GraphRun> current = new AtomicReference<>();
                TaskGraph g = TaskGraph.named("order-" + round);
                Task<DeviceBuffer> first = g.task("first").onGpu(0).gpu(ctx -> {
                    GpuContext c = ctx.unwrap(GpuContext.class);
                    DeviceBuffer b = c.allocate(4);
                    c.kernels().fill(1, 5f, b);
                    // the window between this task's device work and its report: a follower that
                    // could complete in it would be seen by the latch before the timeout
                    c.onDeviceDone(() -> awaitQuietly(followerDone, 200));
                    return b;
                });
                Task<float[]> second = g.task("second").after(first).onGpu(1).gpu(ctx -> {
                    GpuContext c = ctx.unwrap(GpuContext.class);
                    DeviceBuffer here = c.onThisDevice(ctx.input(first));
                    c.onDeviceDone(() -> {
                        seen.set(current.get().state(first));
                        followerDone.countDown();
                    });
                    return c.download(here, new float[1]);
                });
                GraphRun run = s.submit(g);
                current.set(run);
                run.await(Duration.ofSeconds(10));
                assertThat(run.result(second)).containsExactly(5f);
                assertThat(seen.get())
                        .as("round %d: the predecessor when the follower completed", round)
                        .isEqualTo(TaskState.SUCCEEDED);
            }
        }
    }

    private static void awaitQuietly(java.util.concurrent.CountDownLatch latch, long millis) {
        try {
            latch.await(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A body on cuda:1 that releases a buffer of cuda:0 gives it back to cuda:0's pool once its
     * work is done, without making cuda:0 current on cuda:1's launcher or recording cuda:0's event
     * on cuda:1's stream (the simulated driver refuses both, as the real one does).
     */
    @Test
    void releasingABufferOfAnotherDeviceFromABodyReturnsItToItsOwnPool() throws Exception {
        MultiGpuBackend gpus = twoGpus(2);
        GpuBackend zero = gpus.devices().get(0);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpus).build()) {
            DeviceBuffer peer = zero.memory().allocate(64);
            AtomicReference<Integer> currentAfter = new AtomicReference<>();
            TaskGraph g = TaskGraph.named("peer-release");
            Task<float[]> use = g.task("use").onGpu(1).gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer here = c.onThisDevice(peer);
                c.release(peer);
                currentAfter.set(cuda.currentDevice());
                return c.download(here, new float[1]);
            });
            GraphRun run = s.execute(g);
            assertThat(run.result(use)).hasSize(1);
            assertThat(currentAfter.get())
                    .as("cuda:1's launcher keeps its own context current")
                    .isEqualTo(1);
            assertThat(peer.isReleased()).isTrue();
            assertThat(zero.memory().statistics().used()).isZero();
        }
    }

    @Test
    void aDeviceThatIsDownIsLeftOutAndTheStatusSaysSo() {
        MultiGpuBackend gpus = twoGpus(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpus).build()) {
            cuda.failKernelAtCompletion("hts_fill_f32", 700); // the next fill poisons the simulated context
            TaskGraph poison = TaskGraph.named("poison");
            poison.task("bad").onGpu(0).bodies(ctx -> 0, ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(1, 1f, c.scratch(4));
                return 1;
            });
            assertThatThrownBy(() -> s.execute(poison)).isInstanceOf(GraphRunException.class);
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> gpus.devices().get(0).status().health() == DeviceHealth.DOWN);
            assertThat(gpus.status().health()).isIn(DeviceHealth.DEGRADED, DeviceHealth.DOWN);
            assertThat(gpus.deviceStatuses())
                    .hasSize(2)
                    .first()
                    .extracting(s0 -> s0.health())
                    .isEqualTo(DeviceHealth.DOWN);
        }
    }

    @Test
    void aTaskPinnedToADeviceHtsDoesNotRunFailsSayingWhich() {
        MultiGpuBackend gpus = twoGpus(1);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpus).build()) {
            TaskGraph g = TaskGraph.named("nowhere");
            g.task("on-7").onGpu(7).gpu(ctx -> 1);
            assertThatThrownBy(() -> s.execute(g))
                    .isInstanceOf(GraphRunException.class)
                    .hasStackTraceContaining("task 'on-7' is pinned to cuda:7, but HTS runs cuda:0");
        }
    }
}
