package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.CudaErrorKind;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Shutdown, sticky errors and abandoned device work, on a simulated device. */
class GpuBackendFaultTests {

    private static final long MIB = 1L << 20;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    private GpuBackend backend(int streams) {
        return cuda.backend(streams);
    }

    /** A task filling a 1 MiB device buffer it returns, kept in {@code produced} for the test to watch. */
    private static Task<DeviceBuffer> producing(TaskGraph g, AtomicReference<DeviceBuffer> produced) {
        return g.task("produce").gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.allocate(MIB);
            c.kernels().fill(1024, 1f, b);
            produced.set(b);
            return b;
        });
    }

    /** Closed before the scheduler: lets held device work run, so a failed assertion never leaves the run hanging. */
    private HeldWork letWorkRun() {
        return () -> cuda.autoRun(true);
    }

    private interface HeldWork extends AutoCloseable {
        @Override
        void close();
    }

    private static float fillOnGpu(GpuContext c) {
        c.kernels().fill(16, 1f, c.scratch(64));
        return 1f;
    }

    // ------------------------------------------------------------------ shutdown

    /**
     * A shutdown asked for while the run's last task is on the GPU: the run ends, and the
     * scheduler terminates as soon as it does, its backend closed and its device memory returned.
     */
    @Test
    void shutdownDuringARunWhoseLastTaskCompletesOnTheGpuTerminatesWhenTheRunEnds() throws Exception {
        cuda.autoRun(false);
        GpuBackend gpu = backend(1);
        Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
        try {
            TaskGraph g = TaskGraph.named("last-on-gpu");
            Task<Integer> prepare = g.task("prepare").cpu(ctx -> 4);
            Task<Float> last = g.task("last").after(prepare).gpu(ctx -> fillOnGpu(ctx.unwrap(GpuContext.class)));
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(5)).until(() -> cuda.queuedWork() > 0);
            s.shutdown();
            cuda.autoRun(true);
            assertThat(run.await(Duration.ofSeconds(10)).result(last)).isEqualTo(1f);
            assertThat(s.awaitTermination(Duration.ofSeconds(10)))
                    .as("terminated, no 30 s stall")
                    .isTrue();
            assertThat(cuda.allocatedBytes())
                    .as("the launcher released the pool as it exited")
                    .isZero();
            assertThat(cuda.pinnedBuffers()).isZero();
        } finally {
            s.close();
        }
    }

    /** Closing the backend from its own launcher (a completion action) returns at once; the launcher then cleans up. */
    @Test
    void closingTheBackendFromItsOwnLauncherReturnsAtOnceAndTheLauncherReleasesTheDevice() throws Exception {
        GpuBackend gpu = backend(1);
        CountDownLatch closeReturned = new CountDownLatch(1);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
                HeldWork work = letWorkRun()) {
            TaskGraph g = TaskGraph.named("close-from-inside");
            Task<Float> t = g.task("t").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.onDeviceDone(() -> {
                    gpu.close();
                    closeReturned.countDown();
                });
                return fillOnGpu(c);
            });
            GraphRun run = s.submit(g);
            assertThat(closeReturned.await(10, TimeUnit.SECONDS))
                    .as("close() did not join its own thread")
                    .isTrue();
            assertThat(run.await(Duration.ofSeconds(10)).result(t)).isEqualTo(1f);
            await().atMost(Duration.ofSeconds(10)).until(() -> cuda.allocatedBytes() == 0);

            // later GPU work is refused with the reason, on the CPU when it can
            TaskGraph later = TaskGraph.named("later");
            Task<String> dual = later.task("dual").bodies(ctx -> "cpu", ctx -> "gpu");
            assertThat(s.execute(later).result(dual)).isEqualTo("cpu");
            TaskGraph gpuOnly = TaskGraph.named("gpu-only");
            gpuOnly.task("only").gpu(ctx -> "gpu");
            assertThatThrownBy(() -> s.execute(gpuOnly))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(GpuUnavailableException.class)
                    .hasMessageContaining("is closing");
        }
    }

    // ------------------------------------------------------------------ sticky errors

    /**
     * After a sticky error with GPU-only tasks queued, the run's first failure is the CUDA error of
     * the task that raised it; the queued tasks fail with that error as their cause.
     */
    @Test
    void afterAStickyErrorTheRunsFirstFailureIsTheCudaErrorNotTheQueuedTasksRefusal() {
        cuda.autoRun(false);
        GpuBackend gpu = backend(1);
        try (Scheduler s = Scheduler.builder()
                        .threads(2)
                        .gpuBackend(gpu)
                        .failureMode(FailureMode.CONTINUE)
                        .build();
                HeldWork work = letWorkRun()) {
            cuda.failKernelAtCompletion("hts_fill_f32", 700);
            TaskGraph g = TaskGraph.named("sticky");
            g.task("bad").gpu(ctx -> fillOnGpu(ctx.unwrap(GpuContext.class)));
            for (int i = 0; i < 3; i++) {
                g.task("queued" + i).gpu(ctx -> 2f);
            }
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(5)).until(() -> gpu.status().queued() == 3);
            cuda.runAll();
            GraphRunException failure = catchRunFailure(run);
            assertThat(failure.failures()).hasSize(4);
            assertThat(failure.failures().get(0).taskName()).isEqualTo("bad");
            assertThat(failure.failures().get(0).error())
                    .isInstanceOf(CudaException.class)
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(failure.failures().subList(1, 4)).allSatisfy(f -> {
                assertThat(f.error())
                        .isInstanceOf(GpuUnavailableException.class)
                        .hasMessageContaining("cannot run on cuda:0")
                        .hasCauseInstanceOf(CudaException.class);
            });
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DOWN);
            assertThat(gpu.status().queued()).isZero();
        }
    }

    /** With fail-fast, the sticky error stops the run: the queued tasks are cancelled, not failed, and counted once. */
    @Test
    void aFailFastRunStoppedByAStickyErrorCancelsItsQueuedTasksOnce() {
        cuda.autoRun(false);
        GpuBackend gpu = backend(1);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
                HeldWork work = letWorkRun()) {
            cuda.failKernelAtCompletion("hts_fill_f32", 719);
            TaskGraph g = TaskGraph.named("sticky-fail-fast");
            g.task("bad").gpu(ctx -> fillOnGpu(ctx.unwrap(GpuContext.class)));
            Task<Float> cancelledEarly = g.task("cancelled-early").gpu(ctx -> 2f);
            g.task("queued").gpu(ctx -> 2f);
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(5)).until(() -> gpu.status().queued() == 2);
            run.cancel(cancelledEarly); // cancelled while queued on the device: the device's refusal must not count it
            // again
            cuda.runAll();
            GraphRunException failure = catchRunFailure(run);
            assertThat(failure.failures()).singleElement().satisfies(f -> {
                assertThat(f.taskName()).isEqualTo("bad");
                assertThat(f.error())
                        .isInstanceOf(CudaException.class)
                        .hasMessageContaining("CUDA_ERROR_LAUNCH_FAILED");
                CudaException cuda719 = (CudaException) f.error();
                assertThat(cuda719.code())
                        .as("the CUresult a handler can switch on")
                        .isEqualTo(719);
                assertThat(cuda719.errorName()).isEqualTo("CUDA_ERROR_LAUNCH_FAILED");
                assertThat(cuda719.kind()).isEqualTo(CudaErrorKind.STICKY);
            });
            assertThat(run.states())
                    .containsEntry("bad", TaskState.FAILED)
                    .containsEntry("cancelled-early", TaskState.CANCELLED)
                    .containsEntry("queued", TaskState.CANCELLED);
            assertThat(run.isDone()).isTrue();
        }
    }

    /**
     * The task that raised a sticky error allows retries, and three GPU-only tasks (one of them
     * allowing retries too) are in flight with it. The device is lost: no retry meets it DOWN. The
     * culprit ends with the CUDA error after one attempt, as the run's first failure; the others
     * fail with the device's refusal caused by it, each after one attempt.
     */
    @org.junit.jupiter.api.RepeatedTest(3)
    void aStickyErrorOfATaskWithRetriesIsNotRetriedOnTheLostDeviceAndStaysTheRunsFirstFailure() {
        cuda.autoRun(false);
        GpuBackend gpu = backend(4);
        java.util.Map<String, java.util.concurrent.atomic.AtomicInteger> bodies =
                new java.util.concurrent.ConcurrentHashMap<>();
        try (Scheduler s = Scheduler.builder()
                        .threads(2)
                        .gpuBackend(gpu)
                        .failureMode(FailureMode.CONTINUE)
                        .build();
                HeldWork work = letWorkRun()) {
            cuda.failKernelAtCompletion("hts_scale_f32", 700);
            TaskGraph g = TaskGraph.named("sticky-retries");
            g.task("culprit").retries(2, Duration.ZERO).gpu(ctx -> {
                bodies.computeIfAbsent("culprit", k -> new java.util.concurrent.atomic.AtomicInteger())
                        .incrementAndGet();
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.scratch(64);
                c.kernels().scale(16, 2f, b);
                return c.download(b, new float[16]);
            });
            for (int i = 0; i < 3; i++) {
                String name = "other" + i;
                g.task(name).retries(i == 0 ? 2 : 0, Duration.ZERO).gpu(ctx -> {
                    bodies.computeIfAbsent(name, k -> new java.util.concurrent.atomic.AtomicInteger())
                            .incrementAndGet();
                    return fillOnGpu(ctx.unwrap(GpuContext.class));
                });
            }
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(5)).until(() -> cuda.queuedWork() >= 4);
            cuda.runAll();
            GraphRunException failure = catchRunFailure(run);
            assertThat(failure.failures()).hasSize(4);
            assertThat(failure.failures().get(0).taskName())
                    .as("the run's failures: %s", failure.failures())
                    .isEqualTo("culprit");
            assertThat(failure.failures().get(0).error())
                    .isInstanceOf(CudaException.class)
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(failure.failures().subList(1, 4))
                    .allSatisfy(f -> assertThat(f.error())
                            .isInstanceOf(GpuUnavailableException.class)
                            .hasMessageContaining("task 'culprit'")
                            .hasCauseInstanceOf(CudaException.class));
            assertThat(bodies)
                    .as("bodies run per task")
                    .hasSize(4)
                    .allSatisfy((task, n) -> assertThat(n.get()).as(task).isEqualTo(1));
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DOWN);
        }
    }

    /**
     * The same with a dual-bodied culprit allowed one retry: the retry runs its CPU body (the GPU
     * is lost), and succeeds; the tasks in flight with it fail with the refusal naming it.
     */
    @org.junit.jupiter.api.RepeatedTest(3)
    void aStickyErrorOfADualBodiedTaskWithARetryRetriesOnTheCpu() {
        cuda.autoRun(false);
        GpuBackend gpu = backend(4);
        try (Scheduler s = Scheduler.builder()
                        .threads(2)
                        .gpuBackend(gpu)
                        .failureMode(FailureMode.CONTINUE)
                        .policy(new io.hts.engine.policy.GpuFirstPolicy())
                        .build();
                HeldWork work = letWorkRun()) {
            cuda.failKernelAtCompletion("hts_scale_f32", 700);
            TaskGraph g = TaskGraph.named("sticky-dual-retry");
            Task<String> culprit = g.task("culprit").retries(1, Duration.ZERO).bodies(ctx -> "cpu", ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.scratch(64);
                c.kernels().scale(16, 2f, b);
                return "gpu";
            });
            for (int i = 0; i < 3; i++) {
                g.task("other" + i).gpu(ctx -> fillOnGpu(ctx.unwrap(GpuContext.class)));
            }
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(5)).until(() -> cuda.queuedWork() >= 4);
            cuda.runAll();
            GraphRunException failure = catchRunFailure(run);
            assertThat(run.state(culprit)).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.result(culprit)).isEqualTo("cpu");
            assertThat(failure.failures())
                    .hasSize(3)
                    .allSatisfy(f -> assertThat(f.error())
                            .isInstanceOf(GpuUnavailableException.class)
                            .hasMessageContaining("task 'culprit'")
                            .hasCauseInstanceOf(CudaException.class));
        }
    }

    private static GraphRunException catchRunFailure(GraphRun run) {
        try {
            run.await(Duration.ofSeconds(10));
        } catch (GraphRunException ex) {
            return ex;
        } catch (TimeoutException | InterruptedException ex) {
            throw new AssertionError("the run did not end: " + run.diagnose(), ex);
        }
        throw new AssertionError("the run succeeded: " + run.states());
    }

    // ------------------------------------------------------------------ abandoned device work

    /**
     * A timed-out GPU reader of a device buffer: its run ends at the time-out, but the buffer it
     * reads goes back to the pool only once the reader's kernel has really finished.
     */
    @Test
    void aBufferReadByATimedOutGpuTaskReturnsToThePoolOnlyAfterItsKernelEnds() throws Exception {
        cuda.autoRun(false);
        GpuBackend gpu = backend(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
                HeldWork work = letWorkRun()) {
            AtomicReference<DeviceBuffer> produced = new AtomicReference<>();
            TaskGraph g = TaskGraph.named("abandoned-reader");
            Task<DeviceBuffer> producer = producing(g, produced);
            g.task("slow-reader")
                    .after(producer)
                    .timeout(Duration.ofMillis(100))
                    .gpu(ctx -> {
                        GpuContext c = ctx.unwrap(GpuContext.class);
                        c.kernels().scale(1024, 2f, ctx.input(producer)); // runs only when the test lets it
                        return 0f;
                    });
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(5)).until(() -> cuda.queuedWork() > 0);
            cuda.runAll(); // the producer's work: the reader starts, and its kernel hangs
            await().atMost(Duration.ofSeconds(5)).until(() -> cuda.queuedWork() > 0 && produced.get() != null);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10)))
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(TimeoutException.class);
            assertThat(produced.get().isReleased())
                    .as("still read by the abandoned kernel")
                    .isFalse();
            assertThat(gpu.memory().statistics().used()).isGreaterThanOrEqualTo(MIB);
            cuda.runAll();
            await().atMost(Duration.ofSeconds(5)).until(() -> produced.get().isReleased());
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> gpu.memory().statistics().used() == 0);
        }
    }

    /** A run cancelled while a GPU reader's kernel runs: the buffer it reads is released only after the kernel. */
    @Test
    void aBufferReadByAGpuTaskOfACancelledRunIsReleasedOnlyAfterItsKernelEnds() throws Exception {
        cuda.autoRun(false);
        GpuBackend gpu = backend(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
                HeldWork work = letWorkRun()) {
            AtomicReference<DeviceBuffer> produced = new AtomicReference<>();
            TaskGraph g = TaskGraph.named("cancelled-reader");
            Task<DeviceBuffer> producer = producing(g, produced);
            g.task("reader").after(producer).gpu(ctx -> {
                ctx.unwrap(GpuContext.class).kernels().scale(1024, 2f, ctx.input(producer));
                return 0f;
            });
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(5)).until(() -> gpu.status().running() == 2 && cuda.queuedWork() > 0);
            run.cancel();
            await().during(Duration.ofMillis(100))
                    .atMost(Duration.ofSeconds(2))
                    .until(() -> !produced.get().isReleased());
            cuda.runAll();
            assertThat(catchRunFailure(run).status()).isEqualTo(io.hts.engine.graph.RunStatus.CANCELLED);
            await().atMost(Duration.ofSeconds(5)).until(() -> produced.get().isReleased());
        }
    }
}
