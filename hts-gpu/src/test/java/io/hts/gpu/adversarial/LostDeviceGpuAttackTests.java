package io.hts.gpu.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuUnavailableException;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import io.hts.gpu.support.WaiterFirstCuda;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.RepeatedTest;

/**
 * Round 3 of break attempts, on the simulated GPU: sticky errors with retries (failDeviceLost),
 * and callbacks' interrupts on callers that drive the device.
 */
class LostDeviceGpuAttackTests {

    private static final long MIB = 1L << 20;
    private static final int N = 64;
    private static final Duration MAX = Duration.ofSeconds(30);

    private final SimulatedCuda sim = new SimulatedCuda(256 * MIB);

    private GpuBackend backend(int streams) {
        return sim.backend(streams);
    }

    private static GraphRunException runFailure(GraphRun run) throws Exception {
        try {
            run.await(Duration.ofSeconds(15));
        } catch (GraphRunException ex) {
            return ex;
        }
        throw new AssertionError("the run did not fail: " + run.states());
    }

    private static float fillOnGpu(GpuContext c) {
        c.kernels().fill(16, 1f, c.scratch(64));
        return 1f;
    }

    private static String scaleOnGpu(GpuContext c) {
        DeviceBuffer b = c.scratch(64);
        c.kernels().scale(16, 2f, b);
        return "gpu";
    }

    // ================================================================== sticky errors with retries

    /**
     * Randomised: a culprit allowed retries raises a sticky error while 3..9 other tasks (4
     * streams: some in flight, some queued) of random kinds run with it: GPU-only with 0..2
     * retries, dual-bodied with 0..2 retries, some declaring gpu-memory; either failure mode.
     * Expected: the culprit's CudaException is the run's first failure; its GPU body ran once; no
     * GPU body runs after the loss; every task in one final state with one final event; the run
     * ends; the scheduler closes.
     */
    @RepeatedTest(8)
    void aStickyErrorAmongRandomTasksWithRetriesKeepsTheCulpritFirstAndRetriesNothingOnTheDevice(
            org.junit.jupiter.api.RepetitionInfo rep) {
        assertTimeoutPreemptively(MAX, () -> {
            Random rnd = new Random(1000 + rep.getCurrentRepetition());
            sim.autoRun(false);
            GpuBackend gpu = backend(4);
            Map<String, AtomicInteger> gpuBodies = new ConcurrentHashMap<>();
            Map<String, AtomicInteger> finals = new ConcurrentHashMap<>();
            AtomicReference<String> gpuBodyAfterDown = new AtomicReference<>();
            FailureMode mode = rnd.nextBoolean() ? FailureMode.CONTINUE : FailureMode.FAIL_FAST;
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(gpu)
                    .policy(new GpuFirstPolicy())
                    .resource(TaskBuilder.GPU_MEMORY, 64 * MIB)
                    .listener(e -> {
                        if (e.taskName() != null
                                && (e.type() == EventType.TASK_FAILED
                                        || e.type() == EventType.TASK_SUCCEEDED
                                        || e.type() == EventType.TASK_CANCELLED)) {
                            finals.computeIfAbsent(e.taskName(), k -> new AtomicInteger())
                                    .incrementAndGet();
                        }
                    })
                    .build();
            try {
                sim.failKernelAtCompletion("hts_scale_f32", 700);
                TaskGraph g = TaskGraph.named("sticky-random-" + rep.getCurrentRepetition());
                List<Task<?>> tasks = new ArrayList<>();
                tasks.add(g.task("culprit").retries(3, Duration.ZERO).gpu(ctx -> {
                    gpuBodies
                            .computeIfAbsent("culprit", k -> new AtomicInteger())
                            .incrementAndGet();
                    if (gpu.status().health() == DeviceHealth.DOWN) {
                        gpuBodyAfterDown.set("culprit");
                    }
                    return scaleOnGpu(ctx.unwrap(GpuContext.class));
                }));
                int others = 3 + rnd.nextInt(7);
                for (int i = 0; i < others; i++) {
                    String name = "other" + i;
                    var tb = g.task(name).retries(rnd.nextInt(3), Duration.ZERO);
                    if (rnd.nextInt(3) == 0) {
                        tb = tb.resource(TaskBuilder.GPU_MEMORY, 4 * MIB);
                    }
                    io.hts.engine.graph.GpuBody<String> body = ctx -> {
                        gpuBodies
                                .computeIfAbsent(name, k -> new AtomicInteger())
                                .incrementAndGet();
                        if (gpu.status().health() == DeviceHealth.DOWN) {
                            gpuBodyAfterDown.set(name);
                        }
                        fillOnGpu(ctx.unwrap(GpuContext.class));
                        return "gpu";
                    };
                    tasks.add(rnd.nextBoolean() ? tb.gpu(body) : tb.bodies(ctx -> "cpu", body));
                }
                GraphRun run = s.submit(g, RunOptions.failureMode(mode));
                int expectWork = Math.min(4, others + 1);
                await().atMost(Duration.ofSeconds(10)).until(() -> sim.queuedWork() >= expectWork);
                sim.runAll();
                sim.autoRun(true);
                GraphRunException failure = runFailure(run);
                String where = "mode " + mode + ", " + others + " others, states " + run.states() + ", failures "
                        + failure.failures();
                assertThat(failure.failures().get(0).taskName()).as(where).isEqualTo("culprit");
                assertThat(failure.failures().get(0).error())
                        .as(where)
                        .isInstanceOf(CudaException.class)
                        .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
                assertThat(gpuBodies.get("culprit")).as(where).hasValue(1);
                assertThat(gpuBodyAfterDown.get())
                        .as(where + ": a GPU body ran after the device went DOWN")
                        .isNull();
                assertThat(gpuBodies)
                        .as(where)
                        .allSatisfy((k, v) -> assertThat(v.get()).as(k).isEqualTo(1));
                for (Task<?> t : tasks) {
                    assertThat(run.state(t).isTerminal())
                            .as(where + " " + t.name())
                            .isTrue();
                }
                assertThat(finals)
                        .as(where)
                        .allSatisfy((k, v) -> assertThat(v.get()).as(k).isEqualTo(1));
                assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DOWN);
            } finally {
                sim.autoRun(true);
                s.shutdownNow();
                assertThat(s.awaitTermination(Duration.ofSeconds(15)))
                        .as("the scheduler terminated")
                        .isTrue();
            }
        });
    }

    /**
     * The culprit is dual-bodied with retries and its CPU body fails once: after the loss, its
     * retries are on the CPU (the device is DOWN), and it ends SUCCEEDED from the CPU; its GPU body
     * ran once.
     */
    @RepeatedTest(3)
    void aDualBodiedCulpritWhoseCpuRetryFailsOnceStaysOffTheLostDevice() {
        assertTimeoutPreemptively(MAX, () -> {
            sim.autoRun(false);
            GpuBackend gpu = backend(2);
            AtomicInteger gpuRuns = new AtomicInteger();
            AtomicInteger cpuRuns = new AtomicInteger();
            try (Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(gpu)
                    .policy(new GpuFirstPolicy())
                    .resource(TaskBuilder.GPU_MEMORY, 64 * MIB)
                    .build()) {
                sim.failKernelAtCompletion("hts_scale_f32", 700);
                TaskGraph g = TaskGraph.named("dual-culprit");
                Task<String> culprit = g.task("culprit")
                        .retries(3, Duration.ZERO)
                        .resource(TaskBuilder.GPU_MEMORY, 8 * MIB)
                        .bodies(
                                ctx -> {
                                    if (cpuRuns.incrementAndGet() == 1) {
                                        throw new IllegalStateException("test: CPU body fails once");
                                    }
                                    return "cpu";
                                },
                                ctx -> {
                                    gpuRuns.incrementAndGet();
                                    return scaleOnGpu(ctx.unwrap(GpuContext.class));
                                });
                GraphRun run = s.submit(g);
                await().atMost(Duration.ofSeconds(10)).until(() -> sim.queuedWork() >= 1);
                sim.runAll();
                sim.autoRun(true);
                run.await(Duration.ofSeconds(15));
                assertThat(run.result(culprit)).isEqualTo("cpu");
                assertThat(gpuRuns).hasValue(1);
                assertThat(cpuRuns).hasValue(2);
            } finally {
                sim.autoRun(true);
            }
        });
    }

    /**
     * Time limit + retries + sticky error: the culprit's attempt 1 times out with its (sticky)
     * kernel still queued on the device; attempt 2 is dispatched to the (still UP) device; then
     * the held work runs and the context is poisoned. Attempt 1 had already ended (timed out), so
     * the error its late work raised is not its task's any more: the culprit fails with attempt 2's
     * end, the device's refusal naming the culprit, caused by the CUDA error, as the run's first
     * failure, and is not retried on the DOWN device (docs/gpu.md).
     */
    @RepeatedTest(3)
    void aCulpritThatTimedOutBeforeItsStickyErrorSurfaced() {
        assertTimeoutPreemptively(MAX, () -> {
            sim.autoRun(false);
            GpuBackend gpu = backend(4);
            AtomicInteger gpuRuns = new AtomicInteger();
            CountDownLatch timedOut = new CountDownLatch(1);
            try (Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(gpu)
                    .failureMode(FailureMode.CONTINUE)
                    .listener(e -> {
                        if (e.type() == EventType.TASK_TIMED_OUT) {
                            timedOut.countDown();
                        }
                    })
                    .build()) {
                sim.failKernelAtCompletion("hts_scale_f32", 700);
                TaskGraph g = TaskGraph.named("timeout-sticky");
                Task<String> culprit = g.task("culprit")
                        .timeout(Duration.ofMillis(300))
                        .retries(3, Duration.ZERO)
                        .gpu(ctx -> {
                            gpuRuns.incrementAndGet();
                            return scaleOnGpu(ctx.unwrap(GpuContext.class));
                        });
                GraphRun run = s.submit(g);
                assertThat(timedOut.await(10, TimeUnit.SECONDS)).isTrue();
                await().atMost(Duration.ofSeconds(10)).until(() -> gpuRuns.get() >= 2 && sim.queuedWork() >= 2);
                sim.runAll();
                sim.autoRun(true);
                GraphRunException failure = runFailure(run);
                assertThat(run.state(culprit)).isEqualTo(TaskState.FAILED);
                assertThat(failure.failures().get(0).taskName()).isEqualTo("culprit");
                assertThat(failure.failures().get(0).error())
                        .as("first failure %s, GPU bodies %s", failure.failures(), gpuRuns.get())
                        .isInstanceOf(GpuUnavailableException.class)
                        .hasMessageContaining("task 'culprit'")
                        .hasCauseInstanceOf(CudaException.class);
                assertThat(gpuRuns).as("no attempt on the DOWN device").hasValue(2);
            } finally {
                sim.autoRun(true);
            }
        });
    }

    /**
     * Cancel at a random moment around the sticky error; tasks with retries. The run always ends,
     * every task final once, no retry on the DOWN device (GPU bodies at most once per task), the
     * scheduler terminates.
     */
    @RepeatedTest(10)
    void cancelRacingAStickyErrorWithRetries(org.junit.jupiter.api.RepetitionInfo rep) {
        assertTimeoutPreemptively(MAX, () -> {
            Random rnd = new Random(77 + rep.getCurrentRepetition());
            sim.autoRun(false);
            GpuBackend gpu = backend(2);
            Map<String, AtomicInteger> gpuBodies = new ConcurrentHashMap<>();
            Map<String, AtomicInteger> finals = new ConcurrentHashMap<>();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(gpu)
                    .listener(e -> {
                        if (e.taskName() != null
                                && (e.type() == EventType.TASK_FAILED
                                        || e.type() == EventType.TASK_SUCCEEDED
                                        || e.type() == EventType.TASK_CANCELLED)) {
                            finals.computeIfAbsent(e.taskName(), k -> new AtomicInteger())
                                    .incrementAndGet();
                        }
                    })
                    .build();
            try {
                sim.failKernelAtCompletion("hts_scale_f32", 700);
                TaskGraph g = TaskGraph.named("cancel-sticky");
                List<Task<?>> tasks = new ArrayList<>();
                tasks.add(g.task("culprit").retries(2, Duration.ZERO).gpu(ctx -> {
                    gpuBodies
                            .computeIfAbsent("culprit", k -> new AtomicInteger())
                            .incrementAndGet();
                    return scaleOnGpu(ctx.unwrap(GpuContext.class));
                }));
                for (int i = 0; i < 5; i++) {
                    String name = "o" + i;
                    tasks.add(g.task(name).retries(2, Duration.ZERO).gpu(ctx -> {
                        gpuBodies
                                .computeIfAbsent(name, k -> new AtomicInteger())
                                .incrementAndGet();
                        return fillOnGpu(ctx.unwrap(GpuContext.class));
                    }));
                }
                GraphRun run = s.submit(
                        g, RunOptions.failureMode(rnd.nextBoolean() ? FailureMode.CONTINUE : FailureMode.FAIL_FAST));
                await().atMost(Duration.ofSeconds(10)).until(() -> sim.queuedWork() >= 2);
                Thread canceller = new Thread(
                        () -> {
                            LockSupport.parkNanos(rnd.nextInt(2_000_000));
                            run.cancel();
                        },
                        "canceller");
                canceller.setDaemon(true);
                canceller.start();
                LockSupport.parkNanos(rnd.nextInt(2_000_000));
                sim.runAll();
                sim.autoRun(true);
                try {
                    run.await(Duration.ofSeconds(15));
                } catch (GraphRunException expected) {
                    // failed or cancelled
                }
                canceller.join(10_000);
                for (Task<?> t : tasks) {
                    assertThat(run.state(t).isTerminal())
                            .as(t.name() + " " + run.states())
                            .isTrue();
                }
                assertThat(gpuBodies)
                        .as("GPU bodies per task")
                        .allSatisfy((k, v) -> assertThat(v.get()).as(k).isEqualTo(1));
                assertThat(finals)
                        .allSatisfy((k, v) -> assertThat(v.get()).as(k).isEqualTo(1));
            } finally {
                sim.autoRun(true);
                s.shutdownNow();
                assertThat(s.awaitTermination(Duration.ofSeconds(15)))
                        .as("the scheduler terminated")
                        .isTrue();
            }
        });
    }

    /**
     * Without a sticky error, device memory all comes back: a plain (non-sticky) kernel failure
     * with retries, dual-bodied tasks with gpu-memory declared; after close, nothing allocated.
     */
    @RepeatedTest(3)
    void nonStickyFailuresWithRetriesLeakNoDeviceMemory() {
        assertTimeoutPreemptively(MAX, () -> {
            GpuBackend gpu = backend(4);
            try (Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(gpu)
                    .policy(new GpuFirstPolicy())
                    .resource(TaskBuilder.GPU_MEMORY, 64 * MIB)
                    .failureMode(FailureMode.CONTINUE)
                    .build()) {
                for (int round = 0; round < 20; round++) {
                    sim.failNext("cuLaunchKernel", 2); // out of memory: not sticky
                    TaskGraph g = TaskGraph.named("plain-" + round);
                    for (int i = 0; i < 6; i++) {
                        var tb = g.task("t" + i).retries(2, Duration.ZERO).resource(TaskBuilder.GPU_MEMORY, MIB);
                        if (i % 2 == 0) {
                            tb.gpu(ctx -> fillOnGpu(ctx.unwrap(GpuContext.class)));
                        } else {
                            tb.bodies(ctx -> 2f, ctx -> fillOnGpu(ctx.unwrap(GpuContext.class)));
                        }
                    }
                    s.execute(g);
                }
            }
            assertThat(sim.allocatedBytes()).as("device memory after close").isZero();
            assertThat(sim.pinnedBuffers()).isZero();
        });
    }

    // ================================================================== interrupts on callers that drive the device

    private static Task<Float> oneGpuTask(TaskGraph g) {
        return g.task("t").gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            c.kernels().fill(N, 2f, c.scratch(4 * N));
            return 2f;
        });
    }

    /**
     * A waiting caller reports the GPU task's end; a listener on it (TASK_SUCCEEDED) is interrupted
     * by another thread while it runs, and swallows that interrupt. The caller's interrupt is its
     * own: the await must throw InterruptedException or return with the flag set.
     */
    @RepeatedTest(3)
    void anOutsideInterruptSwallowedByAListenerOnTheWaitingCallerIsKept() throws Exception {
        AtomicReference<Thread> caller = new AtomicReference<>();
        AtomicInteger onCaller = new AtomicInteger();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(WaiterFirstCuda.backend(sim))
                .listener(e -> {
                    if (e.type() != EventType.TASK_SUCCEEDED || Thread.currentThread() != caller.get()) {
                        return;
                    }
                    onCaller.incrementAndGet();
                    Thread me = Thread.currentThread();
                    Thread interrupter = new Thread(me::interrupt, "interrupter");
                    interrupter.setDaemon(true);
                    interrupter.start();
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    while (!me.isInterrupted() && System.nanoTime() < until) {
                        LockSupport.parkNanos(100_000);
                    }
                    Thread.interrupted(); // swallowed
                })
                .build()) {
            String outcome = GpuCompletionActionAttackTests.onCaller("caller-outside", () -> {
                caller.set(Thread.currentThread());
                int reported = 0;
                for (int i = 0; i < 200 && reported < 20; i++) {
                    TaskGraph g = TaskGraph.named("o-" + i);
                    oneGpuTask(g);
                    int before = onCaller.get();
                    GraphRun run = s.submit(g);
                    boolean interrupted;
                    try {
                        run.await(Duration.ofSeconds(10));
                        interrupted = Thread.interrupted();
                    } catch (InterruptedException ex) {
                        interrupted = true;
                        run.future().get(10, TimeUnit.SECONDS);
                    }
                    if (onCaller.get() != before) {
                        reported++;
                        if (!interrupted) {
                            return "the caller's interrupt was lost at run " + i;
                        }
                    }
                    Thread.interrupted();
                }
                return reported == 0 ? "the caller never reported a completion" : "never";
            });
            assertThat(outcome).isEqualTo("never");
        }
    }

    /**
     * A sticky error surfaces while a caller waits and drives the device; listeners on
     * TASK_FAILED and whenDone/future stages interrupt themselves. The caller is never left
     * interrupted and its await never throws InterruptedException; the run's first failure is the
     * culprit's CUDA error.
     */
    @RepeatedTest(10)
    void selfInterruptingCallbacksDuringAStickyErrorReportedByAWaiterDoNotInterruptIt() throws Exception {
        Set<String> threads = ConcurrentHashMap.newKeySet();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(WaiterFirstCuda.backend(sim))
                .failureMode(FailureMode.CONTINUE)
                .listener(e -> {
                    if (e.type() == EventType.TASK_FAILED || e.type() == EventType.RUN_FAILED) {
                        threads.add(Thread.currentThread().getName());
                        Thread.currentThread().interrupt();
                    }
                })
                .build()) {
            String outcome = GpuCompletionActionAttackTests.onCaller("caller-sticky", () -> {
                sim.failKernelAtCompletion("hts_scale_f32", 700);
                TaskGraph g = TaskGraph.named("sticky-waiter");
                Task<String> culprit = g.task("culprit")
                        .retries(2, Duration.ZERO)
                        .gpu(ctx -> scaleOnGpu(ctx.unwrap(GpuContext.class)));
                for (int i = 0; i < 3; i++) {
                    g.task("o" + i).retries(1, Duration.ZERO).gpu(ctx -> fillOnGpu(ctx.unwrap(GpuContext.class)));
                }
                sim.autoRun(false); // hold the device work until the stages are hung (else they run where added)
                GraphRun run = s.submit(g);
                Runnable stage = () -> {
                    threads.add("stage@" + Thread.currentThread().getName());
                    Thread.currentThread().interrupt();
                };
                run.whenDone(culprit).whenComplete((r, ex) -> stage.run());
                run.future().whenComplete((r, ex) -> stage.run());
                if (run.isDone()) {
                    return "ended before the stages were hung";
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> sim.queuedWork() >= 4);
                sim.runAll();
                sim.autoRun(true);
                try {
                    run.await(Duration.ofSeconds(10));
                    return "the run succeeded";
                } catch (InterruptedException ex) {
                    return "await interrupted";
                } catch (GraphRunException ex) {
                    if (Thread.interrupted()) {
                        return "caller left interrupted";
                    }
                    if (!ex.failures().get(0).taskName().equals("culprit")
                            || !(ex.failures().get(0).error() instanceof CudaException)) {
                        return "first failure " + ex.failures().get(0);
                    }
                    return "ok";
                }
            });
            assertThat(outcome).as("callbacks ran on %s", threads).isEqualTo("ok");
        }
    }
}
