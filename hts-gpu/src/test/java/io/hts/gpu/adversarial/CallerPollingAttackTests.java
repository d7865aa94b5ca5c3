package io.hts.gpu.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Attacks on "a GPU root its caller launched gets no completion callback unless it may outlast the
 * caller's polling, and the launcher does not poll while a waiter polls (unless the waiter left it
 * a task only the launcher may finish)": callers that time out, are interrupted, stop waiting, run
 * concurrently, register completion actions or large copies, a device whose work completes only
 * when the test says so, submit/execute mixes, and backend close / shutdownNow meanwhile.
 */
class CallerPollingAttackTests {

    private static final long MIB = 1L << 20;
    private static final int N = 64;
    private static final Duration MAX = Duration.ofSeconds(20);

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    /** A launcher that parks as soon as it is idle, so that callers find it free and launch themselves. */
    private GpuBackend backend() {
        return cuda.backend(SimulatedCuda.parkingSettings(2));
    }

    /** One GPU task "fill" (a name with a history of short tasks: no callback for a caller's launch). */
    private static TaskGraph fill(String graph, float v, int n, AtomicReference<Thread> ranOn, Task<?>[] out) {
        TaskGraph g = TaskGraph.named(graph);
        out[0] = g.task("fill").gpu(ctx -> {
            ranOn.set(Thread.currentThread());
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.scratch(4L * n);
            c.kernels().fill(n, v, b);
            return c.download(b, new float[n]);
        });
        return g;
    }

    /** Short tasks named "fill" so that a caller-launched "fill" gets no completion callback. */
    private void history(Scheduler s) {
        for (int i = 0; i < 6; i++) {
            Task<?>[] t = new Task<?>[1];
            assertThat((float[]) s.execute(fill("history-" + i, i, N, new AtomicReference<>(), t))
                            .result(t[0]))
                    .containsOnly((float) i);
        }
    }

    private static void assertAllFinal(GraphRun run) {
        assertThat(run.isDone()).isTrue();
        assertThat(run.pendingTasks()).isZero();
        for (Map.Entry<String, TaskState> e : run.states().entrySet()) {
            assertThat(e.getValue().isTerminal())
                    .as("%s final: %s", e.getKey(), run.states())
                    .isTrue();
        }
    }

    private static boolean blocked(Thread t) {
        Thread.State st = t.getState();
        return st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING || st == Thread.State.TERMINATED;
    }

    /** A waiter whose await(Duration) times out while the work is held: the run still ends right once the work runs. */
    @Test
    void aWaiterThatTimesOutWhileTheWorkIsHeldLosesNothing() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            history(s);
            for (int round = 0; round < 40; round++) {
                cuda.autoRun(false);
                Task<?>[] t = new Task<?>[1];
                GraphRun run = s.submit(fill("timeout-" + round, round, N, new AtomicReference<>(), t));
                Duration first = Duration.ofMillis(round % 2 == 0 ? 1 : 60);
                assertThatThrownBy(() -> run.await(first)).isInstanceOf(TimeoutException.class);
                if (round % 3 == 0) {
                    // a second waiter comes and also times out, then the work runs with nobody waiting
                    assertThatThrownBy(() -> run.await(Duration.ofMillis(2))).isInstanceOf(TimeoutException.class);
                }
                cuda.runAll();
                cuda.autoRun(true);
                assertThat((float[]) run.await(MAX).result(t[0])).containsOnly((float) round);
            }
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /** The caller of execute, interrupted while its held task is in flight: it returns the right result, its flag kept. */
    @Test
    void anExecuteCallerInterruptedWhileItsHeldTaskIsInFlightReturnsTheResultWithItsFlag() throws Exception {
        ExecutorService callers = Executors.newSingleThreadExecutor();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            history(s);
            int launchedByCaller = 0;
            for (int round = 0; round < 20; round++) {
                cuda.autoRun(false);
                AtomicReference<Thread> ranOn = new AtomicReference<>();
                AtomicReference<Thread> caller = new AtomicReference<>();
                Task<?>[] t = new Task<?>[1];
                int r = round;
                Future<Object[]> f = callers.submit(() -> {
                    caller.set(Thread.currentThread());
                    GraphRun run = s.execute(fill("interrupted-" + r, r, N, ranOn, t));
                    return new Object[] {run, Thread.interrupted()};
                });
                await().atMost(MAX).until(() -> ranOn.get() != null);
                launchedByCaller += ranOn.get() == caller.get() ? 1 : 0;
                caller.get().interrupt();
                if (round % 2 == 0) {
                    await().atMost(MAX).until(() -> blocked(caller.get())); // it stopped polling
                }
                cuda.runAll();
                cuda.autoRun(true);
                Object[] out = f.get(MAX.toSeconds(), TimeUnit.SECONDS);
                GraphRun run = (GraphRun) out[0];
                assertThat((float[]) run.result(t[0])).containsOnly((float) round);
                assertThat((Boolean) out[1])
                        .as("the caller's interrupt is kept")
                        .isTrue();
            }
            System.out.println("rounds launched by the caller: " + launchedByCaller);
        } finally {
            callers.shutdownNow();
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /** A waiter in submit(..).await(long) interrupted while the work is held: InterruptedException; the run ends right after. */
    @Test
    void anInterruptedWaiterLeavesARunThatStillEnds() throws Exception {
        ExecutorService waiters = Executors.newSingleThreadExecutor();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            history(s);
            for (int round = 0; round < 20; round++) {
                cuda.autoRun(false);
                Task<?>[] t = new Task<?>[1];
                GraphRun run = s.submit(fill("waiter-interrupted-" + round, round, N, new AtomicReference<>(), t));
                AtomicReference<Thread> waiter = new AtomicReference<>();
                CountDownLatch waiting = new CountDownLatch(1);
                Future<Throwable> f = waiters.submit(() -> {
                    waiter.set(Thread.currentThread());
                    waiting.countDown();
                    try {
                        run.await(Duration.ofSeconds(60));
                        return null;
                    } catch (Throwable ex) {
                        return ex;
                    }
                });
                assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
                waiter.get().interrupt();
                assertThat(f.get(MAX.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
                cuda.runAll();
                cuda.autoRun(true);
                assertThat((float[]) run.await(MAX).result(t[0])).containsOnly((float) round);
            }
        } finally {
            waiters.shutdownNow();
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /**
     * A user completion action (onDeviceDone) and a download over 1 MiB in a root its caller
     * launches, the work held: the caller polls but leaves the task to the launcher; the action
     * runs once, on the launcher; results complete.
     */
    @Test
    void completionActionsAndLargeCopiesOfACallerLaunchedTaskFinishOnTheLauncher() throws Exception {
        ExecutorService callers = Executors.newSingleThreadExecutor();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            history(s);
            for (int round = 0; round < 20; round++) {
                boolean large = round % 2 == 1;
                int n = large ? 400_000 : N;
                cuda.autoRun(false);
                AtomicReference<Thread> ranOn = new AtomicReference<>();
                AtomicReference<Thread> actionOn = new AtomicReference<>();
                AtomicInteger actions = new AtomicInteger();
                AtomicReference<Thread> caller = new AtomicReference<>();
                float v = round;
                TaskGraph g = TaskGraph.named("actions-" + round);
                Task<float[]> fill = g.task("fill").gpu(ctx -> {
                    ranOn.set(Thread.currentThread());
                    GpuContext c = ctx.unwrap(GpuContext.class);
                    DeviceBuffer b = c.scratch(4L * n);
                    c.kernels().fill(n, v, b);
                    if (!large) {
                        c.onDeviceDone(() -> {
                            actionOn.set(Thread.currentThread());
                            actions.incrementAndGet();
                        });
                    }
                    return c.download(b, new float[n]);
                });
                Task<Double> sum = g.task("sum").after(fill).cpu(ctx -> {
                    double x = 0;
                    for (float f : ctx.input(fill)) {
                        x += f;
                    }
                    return x;
                });
                Future<GraphRun> f = callers.submit(() -> {
                    caller.set(Thread.currentThread());
                    return s.execute(g);
                });
                await().atMost(MAX).until(() -> ranOn.get() != null);
                if (round % 4 < 2) {
                    cuda.runAll(); // while the caller polls
                } else {
                    await().atMost(MAX).until(() -> blocked(caller.get()));
                    cuda.runAll(); // after it stopped polling
                }
                cuda.autoRun(true);
                GraphRun run = f.get(MAX.toSeconds(), TimeUnit.SECONDS);
                assertThat(run.result(sum)).isEqualTo((double) v * n);
                if (!large) {
                    assertThat(actions).hasValue(1);
                    assertThat(actionOn.get().getName())
                            .as("a user action runs on the launcher")
                            .startsWith("hts-gpu-");
                }
            }
        } finally {
            callers.shutdownNow();
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /**
     * A caller-launched root with a user completion action returns a device buffer; a GPU successor
     * follows its work on the device (reported only after it) and downloads. The device runs work
     * only when a pump says so. Results right, every run ends.
     */
    @Test
    void aDeviceOrderedSuccessorOfALauncherOnlyTaskIsReportedAfterIt() throws Exception {
        ExecutorService callers = Executors.newSingleThreadExecutor();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            history(s);
            for (int round = 0; round < 20; round++) {
                cuda.autoRun(false);
                AtomicInteger order = new AtomicInteger();
                AtomicInteger actionAt = new AtomicInteger(-1);
                float v = round + 1;
                TaskGraph g = TaskGraph.named("ordered-" + round);
                Task<DeviceBuffer> a = g.task("fill").gpu(ctx -> {
                    GpuContext c = ctx.unwrap(GpuContext.class);
                    DeviceBuffer b = c.allocate(4L * N);
                    c.kernels().fill(N, v, b);
                    c.onDeviceDone(() -> actionAt.set(order.incrementAndGet()));
                    return b;
                });
                Task<float[]> b = g.task("read").after(a).gpu(ctx -> {
                    GpuContext c = ctx.unwrap(GpuContext.class);
                    return c.download(ctx.input(a), new float[N]);
                });
                AtomicInteger readSeenAt = new AtomicInteger(-1);
                Task<Float> c = g.task("check").after(b).cpu(ctx -> {
                    readSeenAt.set(order.incrementAndGet());
                    return ctx.input(b)[N - 1];
                });
                Future<GraphRun> f = callers.submit(() -> s.execute(g));
                long deadline = System.nanoTime() + MAX.toNanos();
                while (!f.isDone() && System.nanoTime() - deadline < 0) {
                    cuda.runAll();
                    Thread.onSpinWait();
                }
                cuda.autoRun(true);
                GraphRun run = f.get(MAX.toSeconds(), TimeUnit.SECONDS);
                assertThat(run.result(c)).isEqualTo(v);
                assertThat(actionAt.get())
                        .as("the action ran before the successor's CPU task")
                        .isEqualTo(1);
                assertThat(readSeenAt.get()).isEqualTo(2);
                assertAllFinal(run);
            }
        } finally {
            callers.shutdownNow();
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /**
     * Four callers, each mixing execute, submit+await and submit+short timed awaits, on graphs of a
     * GPU root, a GPU successor and a CPU successor, while a pump switches the device between
     * holding work and running it. Every run ends with the right result; all memory comes back.
     */
    @Test
    void concurrentCallersUnderAnIntermittentlyHeldDeviceGetRightResults() throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(4);
        AtomicBoolean done = new AtomicBoolean();
        Thread pump = new Thread(
                () -> {
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    while (!done.get()) {
                        cuda.autoRun(false);
                        long until = System.nanoTime() + r.nextInt(20_000, 2_000_000);
                        while (System.nanoTime() - until < 0 && !done.get()) {
                            Thread.onSpinWait();
                        }
                        cuda.autoRun(true);
                        until = System.nanoTime() + r.nextInt(20_000, 500_000);
                        while (System.nanoTime() - until < 0 && !done.get()) {
                            Thread.onSpinWait();
                        }
                    }
                    cuda.autoRun(true);
                },
                "pump");
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            history(s);
            pump.start();
            List<Future<Integer>> all = new ArrayList<>();
            for (int k = 0; k < 4; k++) {
                int caller = k;
                all.add(callers.submit(() -> {
                    int ended = 0;
                    for (int i = 0; i < 40; i++) {
                        float v = caller * 100 + i;
                        boolean withAction = (caller + i) % 5 == 0;
                        TaskGraph g = TaskGraph.named("mix-" + caller + "-" + i);
                        Task<DeviceBuffer> x = g.task("fill").gpu(ctx -> {
                            GpuContext gc = ctx.unwrap(GpuContext.class);
                            DeviceBuffer b = gc.allocate(4 * N);
                            gc.kernels().fill(N, v, b);
                            if (withAction) {
                                gc.onDeviceDone(() -> {});
                            }
                            return b;
                        });
                        Task<float[]> y = g.task("down")
                                .after(x)
                                .gpu(ctx -> ctx.unwrap(GpuContext.class).download(ctx.input(x), new float[N]));
                        Task<Float> z = g.task("sum").after(y).cpu(ctx -> ctx.input(y)[0] + ctx.input(y)[N - 1]);
                        GraphRun run;
                        switch (i % 3) {
                            case 0 -> run = s.execute(g);
                            case 1 -> run = s.submit(g).await();
                            default -> {
                                GraphRun r = s.submit(g);
                                long deadline = System.nanoTime() + MAX.toNanos();
                                while (true) {
                                    try {
                                        r.await(Duration.ofNanos(
                                                ThreadLocalRandom.current().nextInt(1_000, 300_000)));
                                        break;
                                    } catch (TimeoutException ex) {
                                        assertThat(System.nanoTime() - deadline)
                                                .as("run %s ends", r)
                                                .isNegative();
                                    }
                                }
                                run = r;
                            }
                        }
                        assertThat(run.result(z)).isEqualTo(2 * v);
                        assertAllFinal(run);
                        ended++;
                    }
                    return ended;
                }));
            }
            for (Future<Integer> f : all) {
                assertThat(f.get(120, TimeUnit.SECONDS)).isEqualTo(40);
            }
        } finally {
            done.set(true);
            pump.join(10_000);
            callers.shutdownNow();
            cuda.autoRun(true);
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /** The backend closed while a caller-launched task's work is held: close waits, the run ends right when the work runs. */
    @Test
    void backendCloseWhileACallerLaunchedTaskIsHeld() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 6; round++) {
                cuda.autoRun(true);
                GpuBackend gpu = backend();
                try (Scheduler s =
                        Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
                    history(s);
                    cuda.autoRun(false);
                    AtomicReference<Thread> ranOn = new AtomicReference<>();
                    AtomicReference<Thread> caller = new AtomicReference<>();
                    Task<?>[] t = new Task<?>[1];
                    float v = round;
                    Future<GraphRun> f = threads.submit(() -> {
                        caller.set(Thread.currentThread());
                        return s.execute(fill("closing-" + v, v, N, ranOn, t));
                    });
                    await().atMost(MAX).until(() -> ranOn.get() != null);
                    AtomicReference<Thread> closer = new AtomicReference<>();
                    Future<?> closing = threads.submit(() -> {
                        closer.set(Thread.currentThread());
                        gpu.close();
                    });
                    await().atMost(MAX).until(() -> closer.get() != null && blocked(closer.get()));
                    if (round % 2 == 0) {
                        await().atMost(MAX).until(() -> blocked(caller.get()));
                    }
                    cuda.runAll();
                    cuda.autoRun(true);
                    closing.get(MAX.toSeconds(), TimeUnit.SECONDS);
                    GraphRun run = f.get(MAX.toSeconds(), TimeUnit.SECONDS);
                    assertThat((float[]) run.result(t[0])).containsOnly(v);
                }
                assertThat(cuda.allocatedBytes()).isZero();
            }
        } finally {
            threads.shutdownNow();
            cuda.autoRun(true);
        }
    }

    /** shutdownNow() while a caller-launched task's work is held, with a CPU successor: the caller returns, every task final. */
    @Test
    void shutdownNowWhileACallerLaunchedTaskIsHeld() throws Exception {
        ExecutorService threads = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 6; round++) {
                cuda.autoRun(true);
                Scheduler s =
                        Scheduler.builder().threads(2).gpuBackend(backend()).build();
                history(s);
                cuda.autoRun(false);
                AtomicReference<Thread> ranOn = new AtomicReference<>();
                AtomicReference<Thread> caller = new AtomicReference<>();
                AtomicInteger successorRan = new AtomicInteger();
                float v = round;
                TaskGraph g = fill("shutdown-" + round, v, N, ranOn, new Task<?>[1]);
                Task<?> root = g.find("fill").orElseThrow();
                g.task("after").after(root).cpu(ctx -> successorRan.incrementAndGet());
                AtomicReference<GraphRun> seen = new AtomicReference<>();
                Future<Throwable> f = threads.submit(() -> {
                    caller.set(Thread.currentThread());
                    try {
                        seen.set(s.execute(g));
                        return null;
                    } catch (Throwable ex) {
                        return ex;
                    }
                });
                await().atMost(MAX).until(() -> ranOn.get() != null);
                List<GraphRun> cancelled = s.shutdownNow();
                if (round % 2 == 0) {
                    await().atMost(MAX).until(() -> blocked(caller.get()));
                }
                cuda.runAll();
                cuda.autoRun(true);
                Throwable ex = f.get(MAX.toSeconds(), TimeUnit.SECONDS);
                assertThat(ex == null || ex instanceof GraphRunException)
                        .as("%s", ex)
                        .isTrue();
                assertThat(cancelled).hasSize(1);
                GraphRun run = cancelled.get(0);
                assertAllFinal(run);
                assertThat(run.states()).containsEntry("after", TaskState.CANCELLED);
                assertThat(successorRan).hasValue(0);
                assertThat(s.awaitTermination(MAX)).isTrue();
                assertThat(cuda.allocatedBytes()).isZero();
            }
        } finally {
            threads.shutdownNow();
            cuda.autoRun(true);
        }
    }

    /** A timed GPU task whose work is held past its limit while its waiter polls: it fails with the time-out, the run ends, memory comes back once the work runs. */
    @Test
    void aTimedTaskHeldPastItsLimitWhileItsWaiterPollsFailsAndTheRunEnds() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            history(s);
            for (int round = 0; round < 10; round++) {
                cuda.autoRun(false);
                float v = round;
                TaskGraph g = TaskGraph.named("timed-" + round);
                Task<float[]> t = g.task("fill").timeout(Duration.ofMillis(20)).gpu(ctx -> {
                    GpuContext c = ctx.unwrap(GpuContext.class);
                    DeviceBuffer b = c.scratch(4L * N);
                    c.kernels().fill(N, v, b);
                    return c.download(b, new float[N]);
                });
                g.task("after").after(t).cpu(ctx -> 1);
                GraphRun run = round % 2 == 0 ? s.submit(g) : null;
                GraphRunException ex;
                if (run != null) {
                    GraphRun r = run;
                    ex = org.junit.jupiter.api.Assertions.assertThrows(GraphRunException.class, () -> r.await(MAX));
                } else {
                    ex = org.junit.jupiter.api.Assertions.assertThrows(GraphRunException.class, () -> s.execute(g));
                }
                assertThat(ex.failures()).anySatisfy(f -> assertThat(f.error()).isInstanceOf(TimeoutException.class));
                cuda.runAll();
                cuda.autoRun(true);
            }
            await().atMost(MAX).until(() -> s.activeRuns().isEmpty());
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }
}
