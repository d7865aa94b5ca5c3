package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A caller waiting for a run polls the device meanwhile ({@code DeviceBackend.assist}): it sees
 * completions on its own thread, bodies other than a root it launched itself stay on the launcher,
 * and whoever drives, every run ends with the right results, under concurrent callers, cancels and
 * time-outs.
 */
class GpuCallerAssistTests {

    private static final long MIB = 1L << 20;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);
    private final Set<Thread> completionThreads = ConcurrentHashMap.newKeySet();
    /** Where the chains' roots ran: the launcher, or the caller of execute that launched one itself. */
    private final Set<Thread> rootThreads = ConcurrentHashMap.newKeySet();

    private GpuBackend backend() {
        return cuda.backend(2);
    }

    /** A chain of GPU tasks (a buffer filled, doubled, read back) and a CPU task reading it. */
    private TaskGraph chain(String name, float fill, Task<?>[] read, Set<Thread> bodyThreads) {
        TaskGraph g = TaskGraph.named(name);
        Task<DeviceBuffer> start = g.task("start").gpu(ctx -> {
            rootThreads.add(Thread.currentThread());
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.allocate(4 * 64);
            c.kernels().fill(64, fill, b);
            return b;
        });
        Task<DeviceBuffer> twice = g.task("twice").after(start).gpu(ctx -> {
            bodyThreads.add(Thread.currentThread());
            ctx.unwrap(GpuContext.class).kernels().scale(64, 2f, ctx.input(start));
            return ctx.input(start);
        });
        Task<float[]> back = g.task("back").after(twice).gpu(ctx -> {
            bodyThreads.add(Thread.currentThread());
            GpuContext c = ctx.unwrap(GpuContext.class);
            c.onDeviceDone(() -> completionThreads.add(Thread.currentThread()));
            return c.download(ctx.input(twice), new float[64]);
        });
        read[0] = g.task("sum").after(back).cpu(ctx -> {
            float sum = 0;
            for (float v : ctx.input(back)) {
                sum += v;
            }
            return sum;
        });
        return g;
    }

    @Test
    void aWaitingCallerSeesCompletionsOnItsOwnThreadWhileBodiesAfterTheRootStayOnTheLauncher() {
        GpuBackend gpu = backend();
        Set<Thread> bodyThreads = ConcurrentHashMap.newKeySet();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            for (int i = 0; i < 50; i++) {
                Task<?>[] read = new Task<?>[1];
                GraphRun run = s.execute(chain("assist-" + i, 1f + i, read, bodyThreads));
                assertThat(run.result(read[0])).isEqualTo(64 * 2f * (1f + i));
            }
            assertThat(bodyThreads)
                    .as("bodies after the root run on the device's launcher only")
                    .doesNotContain(Thread.currentThread())
                    .allSatisfy(t -> assertThat(t.getName()).startsWith("hts-gpu-"));
            assertThat(rootThreads)
                    .as("roots run on the launcher or on the caller of execute")
                    .allSatisfy(t -> assertThat(
                                    t == Thread.currentThread() || t.getName().startsWith("hts-gpu-"))
                            .isTrue());
            assertThat(completionThreads)
                    .as("completions seen by the launcher or the waiting caller")
                    .allSatisfy(t -> assertThat(
                                    t == Thread.currentThread() || t.getName().startsWith("hts-gpu-"))
                            .isTrue());
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /**
     * Several callers at once, each waiting for its own runs, some cancelled at random moments and
     * some timed out: every run ends, every task in one final state, every successful result right,
     * and the device's memory all returned at the end.
     */
    @Test
    void concurrentCallersCancelsAndTimeOutsNeverLoseARunOrAResult() throws Exception {
        GpuBackend gpu = backend();
        Set<Thread> bodyThreads = ConcurrentHashMap.newKeySet();
        ExecutorService callers = Executors.newFixedThreadPool(4);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> done = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                int caller = c;
                done.add(callers.submit(() -> {
                    go.await();
                    int succeeded = 0;
                    for (int i = 0; i < 40; i++) {
                        Task<?>[] read = new Task<?>[1];
                        float fill = caller * 100 + i;
                        TaskGraph g = chain("caller-" + caller + "-" + i, fill, read, bodyThreads);
                        GraphRun run = s.submit(g);
                        int mode = ThreadLocalRandom.current().nextInt(4);
                        if (mode == 0) {
                            for (int spin = ThreadLocalRandom.current().nextInt(2_000); spin > 0; spin--) {
                                Thread.onSpinWait();
                            }
                            run.cancel();
                        }
                        try {
                            run.await(Duration.ofSeconds(20));
                            assertThat(run.result(read[0])).isEqualTo(64 * 2f * fill);
                            succeeded++;
                        } catch (GraphRunException ex) {
                            assertThat(mode)
                                    .as("only cancelled runs fail: %s", ex.getMessage())
                                    .isZero();
                        }
                        assertThat(run.isDone()).isTrue();
                        assertThat(run.states().values())
                                .allSatisfy(state -> assertThat(state).isIn(TaskState.SUCCEEDED, TaskState.CANCELLED));
                    }
                    return succeeded;
                }));
            }
            go.countDown();
            int succeeded = 0;
            for (Future<Integer> f : done) {
                succeeded += f.get(2, TimeUnit.MINUTES);
            }
            assertThat(succeeded).isPositive();
        } finally {
            callers.shutdownNow();
        }
        assertThat(cuda.allocatedBytes())
                .as("every buffer and the pool returned")
                .isZero();
    }
}
