package io.hts.gpu.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.TaskFailure;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuUnavailableException;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Promises 2 and 3: a run always ends, every task once, the CUDA error first. */
class GpuRunEndingAttackTests {

    private static final long MIB = 1L << 20;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    private GpuBackend backend(int streams) {
        return cuda.backend(streams);
    }

    private static GraphRun ended(GraphRun run) throws Exception {
        return run.future().handle((r, e) -> run).get(10, TimeUnit.SECONDS);
    }

    /**
     * A completion action that throws an Error (an AssertionError from a check in a test, a
     * StackOverflowError...) instead of a RuntimeException: DeviceLauncher.finish catches only
     * RuntimeException, the Error escapes the launcher loop, and the task it was finishing (already
     * removed from inFlight) is never reported. The run never ends; later GPU work is refused.
     */
    @Test
    void aCompletionActionThrowingAnErrorStillEndsTheRun() throws Exception {
        GpuBackend gpu = backend(2);
        // not try-with-resources: Scheduler.close() waits for the run forever (RunAdmission.awaitDrained)
        Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
        try {
            TaskGraph g = TaskGraph.named("action-throws-error");
            Task<Float> t = g.task("t").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(16, 1f, c.scratch(64));
                c.onDeviceDone(() -> {
                    throw new AssertionError("a check in a completion action failed");
                });
                return 1f;
            });
            GraphRun run = s.submit(g);
            GraphRun done = ended(run); // TimeoutException: the run never ends
            assertThat(done.state(t)).isEqualTo(TaskState.FAILED);
        } finally {
            s.shutdownNow();
        }
    }

    /**
     * cuEventQuery failing with a non-sticky error: the launcher treats the task as done
     * ("done = true"), runs its completion actions, frees its scratch memory and gives its stream
     * to the next task, while the task's work is still queued on the device.
     */
    @Test
    void aFailedEventQueryDoesNotFreeScratchMemoryWhoseWorkHasNotRun() throws Exception {
        cuda.autoRun(false);
        GpuBackend gpu = backend(1);
        AtomicReference<DeviceBuffer> scratch = new AtomicReference<>();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("query-fails");
            Task<Float> t = g.task("t").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.scratch(64);
                scratch.set(b);
                c.kernels().fill(16, 1f, b);
                return 1f;
            });
            GraphRun run;
            try {
                run = s.submit(g);
                await().atMost(Duration.ofSeconds(5)).until(() -> cuda.queuedWork() > 0);
                cuda.failNext("cuEventQuery", 400); // CUDA_ERROR_INVALID_HANDLE, not sticky (999 is sticky)
                await().atMost(Duration.ofSeconds(5)).until(() -> run.state(t) != TaskState.RUNNING);
                // the backend waits for the stream on the host before it releases anything the work
                // uses; the scratch memory is never back while the fill kernel is still queued
                assertThat(cuda.queuedKernels() == 0 || !scratch.get().isReleased())
                        .as("scratch released while its kernel is still queued")
                        .isTrue();
                assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
            } finally {
                cuda.autoRun(true);
            }
        }
    }

    /**
     * Many GPU-only and dual-bodied tasks, chains device-ordered, 2 streams so most are queued; one
     * randomly chosen task's kernel raises a sticky error at completion. The run must end, every
     * task once; the first failure is the CUDA error; GPU-only tasks that never ran fail with
     * GpuUnavailableException caused by it; dual-bodied ones that never ran on the GPU succeed on
     * the CPU; failures and cancellations are disjoint.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
    void aStickyErrorAtARandomTaskEndsTheRunWithTheCudaErrorFirst(int seed) throws Exception {
        Random random = new Random(seed);
        cuda.autoRun(false);
        GpuBackend gpu = backend(2);
        int chains = 6;
        int length = 4;
        int culprit = random.nextInt(chains * length);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("sticky-" + seed);
            List<Task<?>> all = new ArrayList<>();
            for (int c = 0; c < chains; c++) {
                Task<?> previous = null;
                for (int k = 0; k < length; k++) {
                    int index = c * length + k;
                    boolean dual = random.nextInt(4) == 0;
                    String kernel = index == culprit ? "scale" : "fill";
                    var builder = g.task("t" + c + "-" + k);
                    if (previous != null) {
                        builder = builder.after(previous);
                    }
                    io.hts.engine.graph.GpuBody<Object> gpuBody = ctx -> {
                        GpuContext gc = ctx.unwrap(GpuContext.class);
                        DeviceBuffer b = gc.allocate(64);
                        if (kernel.equals("scale")) {
                            gc.kernels().scale(16, 2f, b);
                        } else {
                            gc.kernels().fill(16, 1f, b);
                        }
                        return b;
                    };
                    Task<Object> t = dual ? builder.bodies(ctx -> "cpu", gpuBody) : builder.gpu(gpuBody);
                    all.add(t);
                    previous = t;
                }
            }
            cuda.failKernelAtCompletion("hts_scale_f32", 700);
            GraphRun run = s.submit(g);
            try {
                await().atMost(Duration.ofSeconds(5)).until(() -> cuda.queuedWork() > 0);
                for (int i = 0; i < 1 + random.nextInt(5); i++) {
                    cuda.runAll();
                }
            } finally {
                cuda.autoRun(true);
            }
            GraphRun done = ended(run);
            Map<String, TaskState> states = done.states();
            assertThat(states.values())
                    .as("every task final: %s", states)
                    .allMatch(st -> st == TaskState.SUCCEEDED || st == TaskState.FAILED || st == TaskState.CANCELLED);
            if (!done.failures().isEmpty()) {
                Throwable first = done.failures().get(0).error();
                assertThat(first).as("the first failure of %s", done.failures()).isInstanceOf(CudaException.class);
                Set<String> failed = new HashSet<>();
                for (TaskFailure f : done.failures()) {
                    assertThat(failed.add(f.taskName()))
                            .as("%s failed once", f.taskName())
                            .isTrue();
                    assertThat(states.get(f.taskName())).isEqualTo(TaskState.FAILED);
                    if (f.error() instanceof GpuUnavailableException u) {
                        assertThat(u.getCause()).as("cause of %s", f.taskName()).isInstanceOf(CudaException.class);
                    }
                }
                try {
                    done.await(Duration.ofMillis(1));
                } catch (GraphRunException ex) {
                    assertThat(ex.cancelled()).doesNotContainAnyElementsOf(failed);
                    assertThat(ex.cancelled()).doesNotHaveDuplicates();
                }
            }
        }
    }
}
