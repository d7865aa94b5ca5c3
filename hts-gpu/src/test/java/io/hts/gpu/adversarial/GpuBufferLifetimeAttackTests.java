package io.hts.gpu.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Promise 1 and 4: device memory is never reused while device work (or the caller) may still read it. */
class GpuBufferLifetimeAttackTests {

    private static final long MIB = 1L << 20;
    private static final int N = 16;

    private final SimulatedCuda sim = new SimulatedCuda(256 * MIB);
    private final GatedCuda cuda = new GatedCuda(sim);
    /** What the gate kernel read at X[N-1] when it finally ran on the device. */
    private final AtomicReference<Float> gateSaw = new AtomicReference<>();

    GpuBufferLifetimeAttackTests() {
        sim.kernel(
                GatedCuda.GATE_MODULE,
                GatedCuda.GATE,
                l -> gateSaw.set(l.memory(0).getFloat(4 * (N - 1))));
    }

    private GpuBackend backend() {
        return sim.backendThrough(cuda, 4);
    }

    private static DeviceBuffer filled(GpuContext c, float value) {
        DeviceBuffer x = c.allocate(4 * N);
        c.kernels().fill(N, value, x);
        return x;
    }

    /** Enqueues the gate kernel, reading {@code x} on the device: this stream's work is held from here on. */
    private static void gatedRead(GpuContext c, DeviceBuffer x) {
        c.launch(
                c.kernel(GatedCuda.GATE_MODULE, GatedCuda.GATE),
                Dim3.of(1),
                Dim3.of(1),
                KernelArguments.of().pointer(x.address()));
    }

    /**
     * A body that returns its input buffer (a common "in-place" GPU step: scale X and hand it on).
     * The run releases the predecessor's result as soon as its only consumer ended, but that same
     * buffer is the consumer's result, which the caller owns: the caller gets a released buffer
     * whose memory the pool already hands out again.
     */
    @Test
    void aBodyReturningItsInputBufferHandsTheCallerALiveBuffer() throws Exception {
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("in-place");
            Task<DeviceBuffer> a = g.task("a").gpu(ctx -> filled(ctx.unwrap(GpuContext.class), 3f));
            Task<DeviceBuffer> b = g.task("b").after(a).gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer x = ctx.input(a);
                c.kernels().scale(N, 2f, x); // in place
                return x;
            });
            GraphRun run = s.execute(g);
            DeviceBuffer result = run.result(b);
            assertThat(result.isReleased()).as("the caller's result %s", result).isFalse();
            try (DeviceBuffer other = gpu.memory().allocate(4 * N)) {
                assertThat(other.address())
                        .as("a new allocation gets the caller's live buffer")
                        .isNotEqualTo(result.address());
            }
        }
    }

    /**
     * The same in-place step in a chain A -> B (returns its input) -> C: the buffer is released when
     * B ends, before C reads it, so C reads memory the pool gave to someone else (here C's own
     * allocation, which fills it with 7).
     */
    @Test
    void aBufferPassedOnByABodyIsNotReusedBeforeItsNextReaderReadsIt() throws Exception {
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("pass-on");
            Task<DeviceBuffer> a = g.task("a").gpu(ctx -> filled(ctx.unwrap(GpuContext.class), 3f));
            Task<DeviceBuffer> b = g.task("b").after(a).gpu(ctx -> ctx.input(a));
            // a time limit keeps c from following b on the device: it starts once b completed
            Task<float[]> c = g.task("c")
                    .after(b)
                    .timeout(Duration.ofSeconds(30))
                    .gpu(ctx -> {
                        GpuContext gc = ctx.unwrap(GpuContext.class);
                        DeviceBuffer mine = gc.scratch(4 * N);
                        gc.kernels().fill(N, 7f, mine);
                        return gc.download(ctx.input(b), new float[N]);
                    });
            GraphRun run = s.execute(g);
            assertThat(run.result(c)[N - 1])
                    .as("c read b's result, which is a's buffer filled with 3")
                    .isEqualTo(3f);
        }
    }

    /**
     * A follows nothing; B follows A on the device and reads A's buffer in a kernel that has not run
     * yet. Cancelling the run then gives A's buffer back to the pool at once (the engine releases
     * the result when B ends as CANCELLED), while B's kernel, ordered on the device, is still to
     * read it.
     */
    @Test
    void cancellingARunKeepsABufferADeviceOrderedFollowerStillReads() throws Exception {
        GpuBackend gpu = backend();
        AtomicReference<DeviceBuffer> x = new AtomicReference<>();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("cancel-follower");
            Task<DeviceBuffer> a = g.task("a").gpu(ctx -> {
                DeviceBuffer b = filled(ctx.unwrap(GpuContext.class), 3f);
                x.set(b);
                return b;
            });
            Task<Float> b = g.task("b").after(a).gpu(ctx -> {
                gatedRead(ctx.unwrap(GpuContext.class), ctx.input(a));
                return 1f;
            });
            GraphRun run = s.submit(g);
            try {
                await().atMost(Duration.ofSeconds(5))
                        .until(() -> cuda.holding() && run.state(a) == TaskState.SUCCEEDED);
                run.cancel();
                await().during(Duration.ofMillis(200))
                        .atMost(Duration.ofSeconds(2))
                        .until(() -> !x.get().isReleased());
            } finally {
                cuda.open();
            }
            run.future().handle((r, e) -> r).get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(gateSaw.get()).isEqualTo(3f);
        }
    }

    /**
     * A's completion action throws after A's work completed on the device; B already follows A on
     * the device (its kernel reading A's buffer still to run). The launcher closes A's buffer
     * ("the result of a failed attempt reaches nobody"), so the pool hands that memory out again
     * while B's kernel is still to read it.
     */
    @Test
    void aPredecessorFailingAtCompletionKeepsItsBufferForItsDeviceOrderedFollower() throws Exception {
        GpuBackend gpu = backend();
        AtomicReference<DeviceBuffer> x = new AtomicReference<>();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("fail-at-completion");
            Task<DeviceBuffer> a = g.task("a").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = filled(c, 3f);
                x.set(b);
                c.onDeviceDone(() -> {
                    throw new IllegalStateException("checksum mismatch");
                });
                return b;
            });
            g.task("b").after(a).gpu(ctx -> {
                gatedRead(ctx.unwrap(GpuContext.class), ctx.input(a));
                return 1f;
            });
            GraphRun run;
            // hold a's completion until b is enqueued behind it: a's stream waits on nothing
            run = s.submit(g);
            try {
                await().atMost(Duration.ofSeconds(5)).until(() -> run.state(a) == TaskState.FAILED);
                assertThat(cuda.holding())
                        .as("b's kernel is enqueued and has not run")
                        .isTrue();
                assertThat(x.get().isReleased())
                        .as("a's buffer while b's kernel has not read it yet")
                        .isFalse();
            } finally {
                cuda.open();
            }
            run.future().handle((r, e) -> r).get(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * A body that returns its scratch buffer (scratch is released when the task's device work has
     * completed): the successor follows it on the device, and the scratch memory is back in the
     * pool while the successor's kernel is still to read it. Misuse: the body's return is refused.
     */
    @Test
    void aReturnedScratchBufferIsRefusedBeforeAFollowerReadsIt() throws Exception {
        GpuBackend gpu = backend();
        AtomicReference<DeviceBuffer> x = new AtomicReference<>();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("scratch-result");
            Task<DeviceBuffer> a = g.task("a").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.scratch(4 * N);
                c.kernels().fill(N, 3f, b);
                x.set(b);
                return b;
            });
            g.task("b").after(a).gpu(ctx -> {
                gatedRead(ctx.unwrap(GpuContext.class), ctx.input(a));
                return 1f;
            });
            GraphRun run = s.submit(g);
            try {
                // refused when the body returns it: the follower never starts on it
                await().atMost(Duration.ofSeconds(5)).until(() -> run.state(a) != TaskState.RUNNING);
                assertThat(run.state(a))
                        .as("a returned a buffer it does not own")
                        .isEqualTo(TaskState.FAILED);
                assertThat(run.error(a))
                        .hasValueSatisfying(e -> assertThat(e).hasStackTraceContaining("returned its scratch memory"));
            } finally {
                cuda.open();
            }
            run.future().handle((r, e) -> r).get(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * A body that returns a buffer it already closed would have its successor read memory the pool
     * hands out again (here: to the successor's own scratch, filled with 7): the return is refused.
     */
    @Test
    void aBodyReturningAClosedBufferIsRefused() throws Exception {
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("closed-result");
            Task<DeviceBuffer> a = g.task("a").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = filled(c, 3f);
                c.release(b); // "reused once the stream's work is done" - and then returned anyway
                return b;
            });
            Task<float[]> b = g.task("b").after(a).gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(N, 7f, c.scratch(4 * N));
                return c.download(ctx.input(a), new float[N]);
            });
            GraphRun run = s.submit(g);
            run.future().handle((r, e) -> r).get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(run.state(a)).as("a returned a released buffer").isEqualTo(TaskState.FAILED);
        }
    }

    /**
     * A GPU reader with a time limit that expires while its kernel (reading A's buffer) is still to
     * run: the buffer stays held until the kernel has run (the documented promise).
     */
    @Test
    void aTimedOutReadersBufferStaysHeldUntilItsKernelRan() throws Exception {
        GpuBackend gpu = backend();
        AtomicReference<DeviceBuffer> x = new AtomicReference<>();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("timed-out-reader");
            Task<DeviceBuffer> a = g.task("a").gpu(ctx -> {
                DeviceBuffer b = filled(ctx.unwrap(GpuContext.class), 3f);
                x.set(b);
                return b;
            });
            Task<Float> b = g.task("b").after(a).timeout(Duration.ofMillis(50)).gpu(ctx -> {
                gatedRead(ctx.unwrap(GpuContext.class), ctx.input(a));
                return 1f;
            });
            GraphRun run = s.submit(g);
            try {
                await().atMost(Duration.ofSeconds(5)).until(() -> run.state(b) == TaskState.FAILED);
                await().during(Duration.ofMillis(100))
                        .atMost(Duration.ofSeconds(2))
                        .until(() -> !x.get().isReleased());
            } finally {
                cuda.open();
            }
            assertThat(gateSaw.get()).isEqualTo(3f);
            await().atMost(Duration.ofSeconds(5)).until(() -> x.get().isReleased());
        }
    }
}
