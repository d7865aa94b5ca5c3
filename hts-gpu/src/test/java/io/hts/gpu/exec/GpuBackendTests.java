package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.policy.PolicyType;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.MemoryExhaustedException;
import io.hts.gpu.support.SimulatedCuda;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The GPU backend under the real scheduler, on a simulated device (no GPU needed). */
class GpuBackendTests {

    private static final long MIB = 1L << 20;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    private GpuBackend backend(int streams) {
        return cuda.backend(streams);
    }

    private static float[] ramp(int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = i;
        }
        return v;
    }

    /** y = 2x + y on the device, through upload, the built-in kernel and an asynchronous download. */
    private static float[] axpyOnGpu(GpuContext g, float[] x, float[] y) {
        DeviceBuffer dx = g.upload(x);
        DeviceBuffer dy = g.upload(y);
        g.kernels().axpy(x.length, 2f, dx, dy);
        float[] out = g.download(dy, new float[y.length]);
        g.release(dx);
        g.release(dy);
        return out;
    }

    private static float[] axpyOnCpu(float[] x, float[] y) {
        float[] out = new float[y.length];
        for (int i = 0; i < y.length; i++) {
            out[i] = 2f * x[i] + y[i];
        }
        return out;
    }

    @ParameterizedTest
    @EnumSource(
            value = PolicyType.class,
            names = {"GPU_FIRST", "CPU_FIRST"})
    void aTaskWithCpuAndGpuBodiesGivesTheSameResultOnEitherDevice(PolicyType type) {
        float[] x = ramp(1000);
        float[] y = ramp(1000);
        SchedulingPolicy policy = type.create();
        GpuBackend gpu = backend(2);
        try (Scheduler s =
                Scheduler.builder().threads(2).policy(policy).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("axpy");
            Task<float[]> axpy =
                    g.task("axpy").bodies(ctx -> axpyOnCpu(x, y), ctx -> axpyOnGpu(ctx.unwrap(GpuContext.class), x, y));
            GraphRun run = s.execute(g);
            assertThat(run.result(axpy)).containsExactly(axpyOnCpu(x, y));
            Device expected = policy instanceof GpuFirstPolicy ? Device.GPU : Device.CPU;
            assertThat(run.profile().tasks().get(0).device()).isEqualTo(expected);
            assertThat(gpu.memory().statistics().used())
                    .as("uploads released after the task")
                    .isZero();
        }
        assertThat(cuda.allocatedBytes())
                .as("the scheduler closed the backend and its pool")
                .isZero();
        assertThat(cuda.pinnedBuffers()).isZero();
    }

    /** A GPU task's output buffer is the downstream GPU task's input in place: no copy, one address. */
    @Test
    void aDeviceBufferFlowsToADownstreamGpuTaskWithoutACopy() {
        GpuBackend gpu = backend(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("flow");
            Task<DeviceBuffer> produce = g.task("produce").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.allocate(4 * 256);
                c.kernels().fill(256, 3f, b);
                return b;
            });
            long[] seen = new long[2];
            Task<float[]> consume = g.task("consume").after(produce).gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer in = ctx.input(produce);
                seen[1] = in.address();
                c.kernels().scale(256, 2f, in);
                DeviceBuffer sum = c.scratch(4);
                c.kernels().sum(256, in, sum);
                float[] out = c.download(sum, new float[1]);
                c.onDeviceDone(() -> seen[0] = 1); // no release: the run returns 'in' after its last consumer
                return out; // filled by the time the task completes, not yet now
            });
            Task<Float> read = g.task("read").after(consume).cpu(ctx -> ctx.input(consume)[0]);
            GraphRun run = s.execute(g);
            assertThat(run.result(read)).isEqualTo(256 * 6f);
            assertThat(seen[1]).isEqualTo(run.result(produce).address());
            assertThat(seen[0]).as("completion actions ran").isOne();
            assertThat(run.result(produce).isReleased())
                    .as("released by the run after its consumer")
                    .isTrue();
            assertThat(gpu.memory().statistics().used()).isZero();
        }
    }

    /** Direct host buffers copy both ways from their positions, the result there when the task completes. */
    @Test
    void directHostBuffersUploadAndDownloadFromTheirPositions() {
        GpuBackend gpu = backend(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            ByteBuffer in = ByteBuffer.allocateDirect(4 * 64).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 64; i++) {
                in.putFloat(i);
            }
            in.position(4 * 16); // floats 16..63
            ByteBuffer out = ByteBuffer.allocateDirect(4 * 64).order(ByteOrder.nativeOrder());
            out.position(4 * 8).limit(4 * 56); // 48 floats into 8..55
            TaskGraph g = TaskGraph.named("host-buffers");
            g.task("copy").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer d = c.scratch(4 * 48);
                c.upload(in, d);
                c.kernels().scale(48, 2f, d);
                c.download(d, out);
                return null;
            });
            s.execute(g);
            assertThat(out.position()).as("the buffer's position does not move").isEqualTo(4 * 8);
            ByteBuffer all = out.duplicate().clear().order(ByteOrder.nativeOrder());
            for (int i = 0; i < 64; i++) {
                float expected = i >= 8 && i < 56 ? 2f * (i + 8) : 0f;
                assertThat(all.getFloat(4 * i)).as("float %d", i).isEqualTo(expected);
            }
            assertThatThrownBy(() -> s.execute(tooSmallDownload()))
                    .isInstanceOf(GraphRunException.class)
                    .hasStackTraceContaining("holds 16 bytes; the operation needs 32");
            assertThat(gpu.memory().statistics().used()).isZero();
        }
    }

    private static TaskGraph tooSmallDownload() {
        TaskGraph g = TaskGraph.named("too-small");
        g.task("copy").gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            c.download(c.scratch(16), ByteBuffer.allocateDirect(32));
            return null;
        });
        return g;
    }

    /** A chain of GPU tasks: each buffer doubled by the next task, which reads the previous result in place. */
    private static TaskGraph doublingChain(int length, Task<?>[] last, Duration firstTimeout) {
        TaskGraph g = TaskGraph.named("doubling");
        io.hts.engine.graph.TaskBuilder first = g.task("start");
        if (firstTimeout != null) {
            first.timeout(firstTimeout);
        }
        Task<DeviceBuffer> previous = first.gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.allocate(4);
            c.kernels().fill(1, 1f, b);
            return b;
        });
        for (int i = 1; i < length; i++) {
            Task<DeviceBuffer> p = previous;
            previous = g.task("double" + i).after(p).gpu(ctx -> {
                DeviceBuffer b = ctx.input(p);
                ctx.unwrap(GpuContext.class).kernels().scale(1, 2f, b);
                return b;
            });
        }
        Task<DeviceBuffer> end = previous;
        last[0] = g.task("read").after(end).gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            return c.download(ctx.input(end), new float[1]);
        });
        return g;
    }

    /**
     * Dependent GPU tasks are enqueued as soon as their predecessors' work is enqueued, ordered on
     * the device, so several are in flight at once; the result is the one stream order gives.
     */
    @Test
    void aChainOfGpuTasksIsEnqueuedAheadAndOrderedOnTheDevice() {
        cuda.autoRun(false);
        GpuBackend gpu = backend(4);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            Task<?>[] read = new Task<?>[1];
            GraphRun run;
            try {
                run = s.submit(doublingChain(11, read, null));
                await().atMost(Duration.ofSeconds(5)).until(() -> gpu.status().running() == 4);
                assertThat(gpu.status().queued())
                        .as("the rest wait for a stream, already dispatched")
                        .isPositive();
                assertThat(run.states().values()).doesNotContain(TaskState.SUCCEEDED);
            } finally {
                cuda.autoRun(true);
            }
            await().atMost(Duration.ofSeconds(5)).until(run::isDone);
            assertThat((float[]) run.result(read[0])).containsExactly(1024f);
            assertThat(run.states().values()).containsOnly(TaskState.SUCCEEDED);
        }
    }

    /** When a task whose work others follow fails on the device, none of the tasks following it succeeds. */
    @Test
    void whenAFollowedTaskFailsOnTheDeviceNoTaskFollowingItSucceeds() {
        GpuBackend gpu = backend(4);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            cuda.failKernelAtCompletion("hts_scale_f32", 700);
            Task<?>[] read = new Task<?>[1];
            GraphRun run = s.submit(doublingChain(5, read, null));
            // the sticky error poisons the context: whatever was in flight fails, the rest is cancelled
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10)))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(run.states().values())
                    .allSatisfy(state -> assertThat(state).isIn(TaskState.FAILED, TaskState.CANCELLED));
        }
    }

    /** A time limit on a task keeps its successors from being enqueued ahead: its time-out still fails fast. */
    @Test
    void aTimedTaskIsNotFollowedAheadSoItsTimeOutFailsTheRunAtOnce() {
        cuda.autoRun(false);
        GpuBackend gpu = backend(4);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            Task<?>[] read = new Task<?>[1];
            try {
                GraphRun run = s.submit(doublingChain(3, read, Duration.ofMillis(100)));
                assertThatThrownBy(() -> run.await(Duration.ofSeconds(10)))
                        .isInstanceOf(GraphRunException.class)
                        .hasRootCauseInstanceOf(TimeoutException.class);
                assertThat(gpu.status().running())
                        .as("only the timed task was on the device")
                        .isOne();
                assertThat(run.states())
                        .containsEntry("start", TaskState.FAILED)
                        .containsEntry("double1", TaskState.CANCELLED)
                        .containsEntry("read", TaskState.CANCELLED);
            } finally {
                cuda.autoRun(true);
            }
        }
    }

    /** A task completes when its device work has completed, not when its body returned. */
    @Test
    void aTaskCompletesOnlyWhenItsDeviceWorkHasCompleted() throws Exception {
        cuda.autoRun(false);
        GpuBackend gpu = backend(1);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("async");
            Task<float[]> t = g.task("t").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.scratch(4 * 16);
                c.kernels().fill(16, 7f, b);
                return c.download(b, new float[16]);
            });
            Task<Float> after = g.task("after").after(t).cpu(ctx -> ctx.input(t)[15]);
            GraphRun run = s.submit(g);
            await().until(() -> cuda.queuedWork() > 0);
            assertThat(run.state(t)).isEqualTo(TaskState.RUNNING);
            assertThat(gpu.status().running()).isOne();
            assertThat(gpu.streams().inUse()).isOne();
            cuda.runAll();
            run.await(Duration.ofSeconds(10));
            assertThat(run.result(after)).isEqualTo(7f);
            assertThat(gpu.streams().inUse()).isZero();
        }
    }

    /**
     * A GPU task past its time limit fails at once (descendants cancelled), but keeps its stream
     * and its memory until the device work really completes.
     */
    @Test
    void aTimedOutGpuTaskFailsButHoldsItsStreamAndMemoryUntilTheDeviceIsDone() throws Exception {
        cuda.autoRun(false);
        GpuBackend gpu = backend(1);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("slow");
            Task<Float> slow = g.task("slow").timeout(Duration.ofMillis(100)).gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.scratch(MIB);
                c.kernels().fill(1024, 1f, b);
                return 1f;
            });
            Task<Float> next = g.task("next").after(slow).cpu(ctx -> ctx.input(slow));
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10)))
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(TimeoutException.class);
            assertThat(run.state(slow)).isEqualTo(TaskState.FAILED);
            assertThat(run.state(next)).isEqualTo(TaskState.CANCELLED);
            assertThat(gpu.streams().inUse())
                    .as("stream held while the kernel runs")
                    .isOne();
            assertThat(gpu.memory().statistics().used())
                    .as("scratch held while the kernel runs")
                    .isEqualTo(MIB);
            cuda.runAll();
            await().until(() -> gpu.streams().inUse() == 0);
            assertThat(gpu.memory().statistics().used()).isZero();
        }
    }

    /** CUDA's out-of-memory is retryable: with retries the task succeeds on a later attempt. */
    @Test
    void anOutOfMemoryErrorIsRetried() {
        GpuBackend gpu = backend(1);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            AtomicInteger attempts = new AtomicInteger();
            TaskGraph g = TaskGraph.named("oom");
            Task<Integer> t = g.task("t").retries(2, Duration.ofMillis(10)).gpu(ctx -> {
                if (attempts.incrementAndGet() == 1) {
                    cuda.failNext("cuLaunchKernel", 2);
                }
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(16, 1f, c.scratch(64));
                return ctx.attempt();
            });
            assertThat(s.execute(g).result(t)).isEqualTo(2);
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.UP);
        }
    }

    /**
     * A sticky error (an illegal address surfacing at the event) takes the device DOWN and poisons
     * its pool: the failing task fails with the error's name, later dual tasks run on the CPU, and
     * GPU-only tasks fail saying why.
     */
    @Test
    void aStickyErrorTakesTheDeviceDownAndLaterTasksMoveToTheCpu() {
        GpuBackend gpu = backend(2);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .build()) {
            cuda.failKernelAtCompletion("hts_fill_f32", 700);
            TaskGraph g = TaskGraph.named("fault");
            Task<Float> bad = g.task("bad").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(16, 1f, c.scratch(64));
                return 1f;
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(run::await)
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(CudaException.class)
                    .rootCause()
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(run.state(bad)).isEqualTo(TaskState.FAILED);
            // the culprit fails first, so that its error is its run's first; the device is marked
            // DOWN right after, on the thread that saw the error, which may be after the run ended
            await().atMost(Duration.ofSeconds(10)).until(() -> gpu.status().health() == DeviceHealth.DOWN);
            assertThat(gpu.status().detail()).contains("CUDA_ERROR_ILLEGAL_ADDRESS", "task 'bad'", "DOWN");
            assertThat(gpu.memory().poisonedBy()).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThatThrownBy(() -> gpu.memory().allocate(1))
                    .hasMessageContaining("poisoned by CUDA_ERROR_ILLEGAL_ADDRESS");

            TaskGraph later = TaskGraph.named("later");
            Task<String> dual = later.task("dual").bodies(ctx -> "cpu", ctx -> "gpu");
            GraphRun second = s.execute(later);
            assertThat(second.result(dual)).isEqualTo("cpu");

            TaskGraph gpuOnly = TaskGraph.named("gpu-only");
            gpuOnly.task("only").gpu(ctx -> "gpu");
            assertThatThrownBy(() -> s.execute(gpuOnly))
                    .isInstanceOf(GraphRunException.class)
                    .hasMessageContaining("only");
        }
    }

    /** Tasks queued on the backend when it goes DOWN move to the CPU if they can. */
    @Test
    void queuedTasksFallBackToTheCpuWhenTheDeviceGoesDown() {
        cuda.autoRun(false);
        GpuBackend gpu = backend(1);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .failureMode(FailureMode.CONTINUE)
                .build()) {
            cuda.failKernelAtCompletion("hts_fill_f32", 719);
            TaskGraph g = TaskGraph.named("queue");
            g.task("first").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(16, 1f, c.scratch(64));
                return 0;
            });
            Task<String> waiting = g.task("waiting").bodies(ctx -> "cpu", ctx -> "gpu");
            GraphRun run = s.submit(g);
            await().until(() -> gpu.status().queued() == 1);
            cuda.runAll();
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class).hasMessageContaining("first");
            assertThat(run.result(waiting)).isEqualTo("cpu");
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DOWN);
        }
    }

    /**
     * Admission: GPU tasks that declare their device bytes are dispatched only when those bytes are
     * free, so the second waits (without a stream, without memory) until the first has completed.
     */
    @Test
    void tasksThatDeclareDeviceMemoryQueueForItInsteadOfFailing() {
        cuda.autoRun(false);
        GpuBackend gpu = backend(2);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(gpu)
                .resource("gpu-memory", 64 * MIB)
                .build()) {
            TaskGraph g = TaskGraph.named("admission");
            for (String name : new String[] {"first", "second"}) {
                g.task(name).resource("gpu-memory", 40 * MIB).gpu(ctx -> {
                    GpuContext c = ctx.unwrap(GpuContext.class);
                    c.kernels().fill(16, 1f, c.scratch(20 * MIB)); // at most what it declared
                    return name;
                });
            }
            GraphRun run = s.submit(g);
            await().until(() -> gpu.status().running() == 1);
            assertThat(s.resources().available("gpu-memory")).isEqualTo(24 * MIB);
            assertThat(gpu.streams().inUse())
                    .as("the second task holds no stream while it waits")
                    .isOne();
            assertThat(run.states().values()).containsExactlyInAnyOrder(TaskState.RUNNING, TaskState.READY);
            cuda.autoRun(true);
            try {
                await().atMost(Duration.ofSeconds(3)).until(() -> run.isDone());
            } catch (RuntimeException ex) {
                throw new AssertionError(
                        run.states() + " " + gpu.status() + " " + run.diagnose() + " queued work " + cuda.queuedWork(),
                        ex);
            }
            assertThat(run.states().values()).containsOnly(TaskState.SUCCEEDED);
            assertThat(s.resources().available("gpu-memory")).isEqualTo(64 * MIB);
        }
    }

    @Test
    void statusReportsStreamsLoadAndFreeMemory() {
        try (GpuBackend gpu = backend(3)) {
            assertThat(gpu.name()).isEqualTo("cuda:0 Simulated GPU");
            assertThat(gpu.device()).isEqualTo(Device.GPU);
            var status = gpu.status();
            assertThat(status.health()).isEqualTo(DeviceHealth.UP);
            assertThat(status.capacity()).isEqualTo(3);
            assertThat(status.queued()).isZero();
            assertThat(status.running()).isZero();
            assertThat(status.freeMemoryBytes()).isEqualTo(64 * MIB);
            assertThat(gpu.cublasProblem())
                    .hasValueSatisfying(p -> assertThat(p).contains("not loaded"));
        }
    }

    /**
     * cuBLAS takes JCuda's streams and pointers, so a backend over another CUDA API (here the
     * simulation) never loads it, even where JCuda's cuBLAS would load: before, on the GPU machine a
     * simulated backend handed out real cuBLAS, whose first call failed with "not a JCuda stream".
     */
    @Test
    void aBackendOverAnotherCudaApiNeverLoadsCublasAndSaysWhy() {
        GpuBackend gpu = new GpuBackend(cuda, cuda.deviceInfo(0), SimulatedCuda.testSettings(1), true);
        try (Scheduler s = Scheduler.builder().threads(1).gpuBackend(gpu).build()) {
            assertThat(gpu.cublasProblem())
                    .hasValueSatisfying(p -> assertThat(p)
                            .contains("only over JCuda's CUDA API")
                            .contains(SimulatedCuda.class.getName()));
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DEGRADED);
            TaskGraph g = TaskGraph.named("blas");
            g.task("gemm").gpu(ctx -> ctx.unwrap(GpuContext.class).blas());
            assertThatThrownBy(() -> s.execute(g))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("cuBLAS is not available")
                    .hasMessageContaining(SimulatedCuda.class.getName());
        }
    }

    @Test
    void exhaustingThePoolInABodyFailsTheTaskWithTheStatistics() {
        GpuBackend gpu = backend(1);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("big");
            g.task("huge").gpu(ctx -> ctx.unwrap(GpuContext.class).scratch(128 * MIB));
            assertThatThrownBy(() -> s.execute(g))
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(MemoryExhaustedException.class)
                    .rootCause()
                    .hasMessageContaining("cannot allocate 128.0 MiB")
                    .hasMessageContaining("hts.gpu.memory-pool.maximum");
        }
    }
}
