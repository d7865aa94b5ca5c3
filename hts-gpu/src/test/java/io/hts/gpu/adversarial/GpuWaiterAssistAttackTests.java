package io.hts.gpu.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Attacks on "a waiting caller drives the device" (DeviceBackend.assist). */
class GpuWaiterAssistAttackTests {

    private static final long MIB = 1L << 20;
    private static final int N = 64;

    private final SimulatedCuda sim = new SimulatedCuda(256 * MIB);
    private final GatedCuda cuda = new GatedCuda(sim);

    GpuWaiterAssistAttackTests() {
        sim.kernel(GatedCuda.GATE_MODULE, GatedCuda.GATE, l -> {});
    }

    private GpuBackend backend() {
        return sim.backendThrough(cuda, 4);
    }

    /** Runs {@code body} on a fresh thread; on a hang fails with the dump of every thread. */
    private static <T> T onCaller(String name, Duration limit, Callable<T> body) throws Exception {
        FutureTask<T> f = new FutureTask<>(body);
        Thread t = new Thread(f, name);
        t.setDaemon(true);
        t.start();
        try {
            return f.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException ex) {
            fail("hang of " + name + ":\n" + dump());
            throw ex;
        }
    }

    /** Over half a second of an idle device, {@code launcher} uses under a fifth of a core. */
    static void assertIdleLauncherSleeps(Thread launcher) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpu0 = mx.getThreadCpuTime(launcher.getId());
        long wall0 = System.nanoTime();
        await().pollDelay(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> true);
        long cpu = mx.getThreadCpuTime(launcher.getId()) - cpu0;
        long wall = System.nanoTime() - wall0;
        assertThat(cpu)
                .as("launcher CPU ns over %d ms of an idle device", wall / 1_000_000)
                .isLessThan(wall / 5);
    }

    /**
     * Starts a caller that waits for {@code run} (up to 20 s), interrupts it while it waits, and
     * returns how its wait ended: the exception it threw, or "returned".
     */
    static Object interruptedWaiter(GraphRun run) throws InterruptedException {
        AtomicReference<Object> outcome = new AtomicReference<>();
        CountDownLatch waiting = new CountDownLatch(1);
        Thread waiter = new Thread(
                () -> {
                    waiting.countDown();
                    try {
                        run.await(Duration.ofSeconds(20));
                        outcome.set("returned");
                    } catch (Exception ex) {
                        outcome.set(ex);
                    }
                },
                "caller-interrupted");
        waiter.start();
        assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
        waiter.interrupt();
        waiter.join(10_000);
        return outcome.get();
    }

    static String dump() {
        StringBuilder sb = new StringBuilder();
        for (ThreadInfo i : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            String n = i.getThreadName();
            if (!(n.startsWith("hts") || n.startsWith("caller") || n.startsWith("main") || n.contains("worker"))) {
                continue;
            }
            sb.append('"').append(n).append("\" ").append(i.getThreadState()).append('\n');
            StackTraceElement[] st = i.getStackTrace();
            for (int k = 0; k < Math.min(st.length, 22); k++) {
                sb.append("    at ").append(st[k]).append('\n');
            }
        }
        return sb.toString();
    }

    private static void gate(GpuContext c, DeviceBuffer x) {
        c.launch(
                c.kernel(GatedCuda.GATE_MODULE, GatedCuda.GATE),
                Dim3.of(1),
                Dim3.of(1),
                KernelArguments.of().pointer(x.address()));
    }

    /** One GPU task: fill with v, download; the CPU successor sums. */
    private static TaskGraph sumGraph(String name, float v, Task<?>[] out) {
        TaskGraph g = TaskGraph.named(name);
        Task<float[]> a = g.task("a").gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.scratch(4 * N);
            c.kernels().fill(N, v, b);
            return c.download(b, new float[N]);
        });
        out[0] = g.task("sum").after(a).cpu(ctx -> {
            float s = 0;
            for (float x : ctx.input(a)) {
                s += x;
            }
            return s;
        });
        return g;
    }

    // ------------------------------------------------------------------ nested waits

    /**
     * A GPU body that runs another GPU graph and waits for it (scheduler.execute). Whether the body
     * runs on the launcher or on a waiter that holds the driving token, the inner GPU task needs
     * that same token: it must not deadlock (fail fast, or run the inner task).
     */
    @Test
    void aGpuBodyThatExecutesAnotherGpuGraphDoesNotDeadlock() throws Exception {
        GpuBackend gpu = backend();
        Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
        try {
            Task<?>[] inner = new Task<?>[1];
            TaskGraph g = TaskGraph.named("outer");
            Task<Float> outer = g.task("outer").gpu(ctx -> {
                GraphRun r;
                try {
                    r = s.execute(sumGraph("inner", 2f, inner));
                } catch (RuntimeException ex) {
                    return -1f; // failing fast is acceptable
                }
                return (Float) r.result(inner[0]);
            });
            Object result = onCaller("caller-nested", Duration.ofSeconds(5), () -> {
                try {
                    return s.execute(g).result(outer);
                } catch (GraphRunException ex) {
                    return ex;
                }
            });
            assertThat(result).isNotNull();
        } finally {
            s.shutdownNow();
        }
    }

    /**
     * The same nested wait with the outer body on the launcher thread (the caller waits on the
     * future, so it never assists): DeviceLauncher.assist returns false on the launcher, the body
     * blocks in join, and nothing else may drive the device... except a waiter of the inner run?
     * The inner run's waiter IS the launcher. Must not deadlock either.
     */
    @Test
    void aGpuBodyOnTheLauncherThatExecutesAnotherGpuGraphDoesNotDeadlock() throws Exception {
        GpuBackend gpu = backend();
        Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
        try {
            Task<?>[] inner = new Task<?>[1];
            AtomicReference<String> outerThread = new AtomicReference<>();
            TaskGraph g = TaskGraph.named("outer-launcher");
            Task<Float> outer = g.task("outer").gpu(ctx -> {
                outerThread.set(Thread.currentThread().getName());
                GraphRun r;
                try {
                    r = s.execute(sumGraph("inner", 2f, inner));
                } catch (RuntimeException ex) {
                    return -1f;
                }
                return (Float) r.result(inner[0]);
            });
            Object result = onCaller("caller-nested-launcher", Duration.ofSeconds(5), () -> {
                GraphRun run = s.submit(g);
                run.future().get(); // no assist: the launcher runs the outer body
                return run.result(outer) + " on " + outerThread.get();
            });
            assertThat(result).isNotNull();
        } finally {
            s.shutdownNow();
        }
    }

    /**
     * A GPU body calls scheduler.close() (a "last step shuts the app down" pattern). Scheduler.close
     * documents that, called from a callback the scheduler runs, it returns at once; a GPU body is
     * not marked as such (UserCode), so close waits for the run this body is part of.
     */
    @Test
    void aGpuBodyClosingTheSchedulerDoesNotHangItsRun() throws Exception {
        GpuBackend gpu = backend();
        Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
        try {
            TaskGraph g = TaskGraph.named("closes");
            Task<Float> t = g.task("t").gpu(ctx -> {
                s.close();
                return 1f;
            });
            Object r = onCaller(
                    "caller-close", Duration.ofSeconds(5), () -> s.execute(g).result(t));
            assertThat(r).isEqualTo(1f);
        } finally {
            s.shutdownNow();
        }
    }

    /** Closing the GPU backend from a body run by a waiter: the run ends, the backend closes. */
    @Test
    void aGpuBodyClosingTheBackendEndsItsRun() throws Exception {
        GpuBackend gpu = backend();
        Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
        try {
            TaskGraph g = TaskGraph.named("closes-backend");
            Task<Float> t = g.task("t").gpu(ctx -> {
                gpu.close();
                return 1f;
            });
            Object r = onCaller("caller-close-backend", Duration.ofSeconds(5), () -> {
                try {
                    return s.execute(g).result(t);
                } catch (GraphRunException ex) {
                    return ex;
                }
            });
            assertThat(r).isEqualTo(1f);
        } finally {
            s.close();
        }
        assertThat(sim.allocatedBytes()).isZero();
    }

    // ------------------------------------------------------------------ interrupts and time-outs

    /**
     * Bodies stay on the launcher, so a waiter's interrupt and deadline never reach one: with the
     * body blocked on host work, a short await times out, an interrupted await throws
     * InterruptedException, and the run still ends with the body's result.
     */
    @Test
    void aWaitersInterruptAndDeadlineNeverReachTheGpuBody() throws Exception {
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            CountDownLatch inBody = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<String> bodyThread = new AtomicReference<>();
            TaskGraph g = TaskGraph.named("waiter-isolation");
            Task<Float> t = g.task("t").gpu(ctx -> {
                bodyThread.set(Thread.currentThread().getName());
                inBody.countDown();
                if (!release.await(10, TimeUnit.SECONDS)) { // host work of the body, interruptible
                    throw new IllegalStateException("not released");
                }
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(N, 1f, c.scratch(4 * N));
                return 7f;
            });
            GraphRun run = s.submit(g);
            assertThat(inBody.await(5, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> run.await(Duration.ofMillis(20)))
                    .isInstanceOf(java.util.concurrent.TimeoutException.class);
            assertThat(interruptedWaiter(run))
                    .as("the interrupted waiter's outcome")
                    .isInstanceOf(InterruptedException.class);
            release.countDown();
            assertThat(run.await(Duration.ofSeconds(10)).result(t)).isEqualTo(7f);
            assertThat(bodyThread.get()).startsWith("hts-gpu-");
        }
    }

    /**
     * A GPU body that sets its thread's interrupt flag (restoring it after catching an
     * InterruptedException, as recommended): run on the caller's thread, the flag leaks to the
     * caller, whose execute() returns with it set and whose next await(Duration) throws.
     */
    @Test
    void aBodysInterruptDoesNotLeakToTheWaitingCaller() throws Exception {
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            Object leaked = onCaller("caller-leak", Duration.ofSeconds(20), () -> {
                for (int i = 0; i < 200; i++) {
                    TaskGraph g = TaskGraph.named("leak-" + i);
                    g.task("t").gpu(ctx -> {
                        Thread.currentThread().interrupt();
                        GpuContext c = ctx.unwrap(GpuContext.class);
                        c.kernels().fill(N, 1f, c.scratch(4 * N));
                        return null;
                    });
                    s.execute(g);
                    if (Thread.interrupted()) {
                        return "caller interrupted after run " + i;
                    }
                }
                return "never";
            });
            assertThat(leaked).isEqualTo("never");
        }
    }

    /**
     * The same body on the launcher: its flag stays set on the launcher thread, whose parkNanos then
     * returns at once: the launcher spins a core while the device is idle.
     */
    @Test
    void aBodysInterruptDoesNotMakeTheLauncherSpin() throws Exception {
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            AtomicReference<Thread> launcher = new AtomicReference<>();
            for (int i = 0; i < 200 && launcher.get() == null; i++) {
                TaskGraph g = TaskGraph.named("leak-launcher-" + i);
                g.task("t").gpu(ctx -> {
                    if (Thread.currentThread().getName().startsWith("hts-gpu-")) {
                        launcher.set(Thread.currentThread());
                        Thread.currentThread().interrupt();
                    }
                    return null;
                });
                s.submit(g).future().get(5, TimeUnit.SECONDS); // a pool-less wait: the launcher drives
            }
            assertThat(launcher.get()).isNotNull();
            assertIdleLauncherSleeps(launcher.get());
        }
    }

    /** Many short time-outs in a row while assisting: results right, every run ends, memory back. */
    @Test
    void repeatedTinyTimeoutsWhileAssistingLoseNothing() throws Exception {
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            onCaller("caller-tiny", Duration.ofSeconds(60), () -> {
                for (int i = 0; i < 100; i++) {
                    Task<?>[] out = new Task<?>[1];
                    GraphRun run = s.submit(sumGraph("tiny-" + i, i, out));
                    while (true) {
                        try {
                            run.await(Duration.ofNanos(1000));
                            break;
                        } catch (TimeoutException ex) {
                            // again
                        }
                    }
                    assertThat(run.result(out[0])).isEqualTo((float) N * i);
                }
                return null;
            });
        }
        assertThat(sim.allocatedBytes()).isZero();
    }

    // ------------------------------------------------------------------ CPU use of waiters

    /**
     * The waiter's run is in a long CPU phase; the device is busy with ANOTHER run's long work (held
     * at the gate). The waiter has nothing to do for its run, yet assist() says "busy" (work in
     * flight on the device, whoever's) and the waiter spins/yields a core for the whole CPU phase.
     */
    @Test
    void aWaiterInACpuPhaseDoesNotSpinWhileAnotherRunKeepsTheDeviceBusy() throws Exception {
        GpuBackend gpu = backend();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph other = TaskGraph.named("long-device-work");
            other.task("held").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                gate(c, c.scratch(64));
                return null;
            });
            GraphRun otherRun = s.submit(other);
            await().atMost(Duration.ofSeconds(5)).until(cuda::holding);

            CountDownLatch cpuPhase = new CountDownLatch(1);
            CountDownLatch inCpu = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("cpu-phase");
            Task<float[]> a = g.task("a").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.scratch(4 * N);
                c.kernels().fill(N, 1f, b);
                return c.download(b, new float[N]);
            });
            Task<Integer> cpu = g.task("cpu").after(a).cpu(ctx -> {
                inCpu.countDown();
                cpuPhase.await(10, TimeUnit.SECONDS);
                return ctx.input(a).length;
            });
            AtomicReference<Object> r = new AtomicReference<>();
            Thread waiter = new Thread(
                    () -> {
                        try {
                            r.set(s.execute(g).result(cpu));
                        } catch (RuntimeException ex) {
                            r.set(ex);
                        }
                    },
                    "caller-cpu-phase");
            waiter.start();
            assertThat(inCpu.await(5, TimeUnit.SECONDS)).isTrue();
            long cpu0 = mx.getThreadCpuTime(waiter.getId());
            long wall0 = System.nanoTime();
            await().pollDelay(Duration.ofMillis(500))
                    .atMost(Duration.ofSeconds(2))
                    .until(() -> true);
            long used = mx.getThreadCpuTime(waiter.getId()) - cpu0;
            long wall = System.nanoTime() - wall0;
            Thread.State state = waiter.getState();
            cpuPhase.countDown();
            cuda.open();
            waiter.join(5000);
            otherRun.future().get(5, TimeUnit.SECONDS);
            assertThat(r.get()).isEqualTo(N);
            assertThat(used)
                    .as("waiter CPU ns over %d ms of its run's CPU phase (state %s)", wall / 1_000_000, state)
                    .isLessThan(wall / 5);
        }
    }

    /** The device idle, the run in a long CPU phase: the waiter blocks. */
    @Test
    void aWaiterInACpuPhaseOnAnIdleDeviceBlocks() throws Exception {
        GpuBackend gpu = backend();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            CountDownLatch cpuPhase = new CountDownLatch(1);
            CountDownLatch inCpu = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("cpu-phase-idle");
            Task<DeviceBuffer> a = g.task("a").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.allocate(4 * N);
                c.kernels().fill(N, 1f, b);
                return b;
            });
            Task<Integer> cpu = g.task("cpu").after(a).cpu(ctx -> {
                inCpu.countDown();
                cpuPhase.await(10, TimeUnit.SECONDS);
                return 5;
            });
            Task<float[]> back = g.task("back")
                    .after(a, cpu)
                    .gpu(ctx -> ctx.unwrap(GpuContext.class).download(ctx.input(a), new float[N]));
            AtomicReference<Object> r = new AtomicReference<>();
            Thread waiter = new Thread(
                    () -> {
                        try {
                            r.set(s.execute(g).result(back)[N - 1]);
                        } catch (RuntimeException ex) {
                            r.set(ex);
                        }
                    },
                    "caller-idle");
            waiter.start();
            assertThat(inCpu.await(5, TimeUnit.SECONDS)).isTrue();
            long cpu0 = mx.getThreadCpuTime(waiter.getId());
            long wall0 = System.nanoTime();
            await().pollDelay(Duration.ofMillis(300))
                    .atMost(Duration.ofSeconds(2))
                    .until(() -> true);
            long used = mx.getThreadCpuTime(waiter.getId()) - cpu0;
            long wall = System.nanoTime() - wall0;
            Thread.State state = waiter.getState();
            cpuPhase.countDown();
            waiter.join(5000);
            assertThat(r.get()).isEqualTo(1f);
            assertThat(state).isIn(Thread.State.WAITING, Thread.State.TIMED_WAITING);
            assertThat(used).isLessThan(wall / 5);
        }
        assertThat(sim.allocatedBytes()).isZero();
    }

    // ------------------------------------------------------------------ faults

    /** A body throwing an Error on the caller's thread: the task fails, the caller gets the run's failure. */
    @Test
    void aBodyThrowingAnErrorOnTheCallersThreadFailsOnlyItsTask() throws Exception {
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            onCaller("caller-error", Duration.ofSeconds(30), () -> {
                for (int i = 0; i < 50; i++) {
                    TaskGraph g = TaskGraph.named("error-" + i);
                    Task<Float> t = g.task("t").gpu(ctx -> {
                        throw new StackOverflowError("body");
                    });
                    GraphRun run = s.submit(g);
                    try {
                        run.await();
                        fail("succeeded");
                    } catch (GraphRunException ex) {
                        assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
                    }
                    Task<?>[] out = new Task<?>[1];
                    assertThat(s.execute(sumGraph("after-error-" + i, 2f, out)).result(out[0]))
                            .isEqualTo(2f * N);
                }
                return null;
            });
        }
        assertThat(sim.allocatedBytes()).isZero();
    }

    /** A sticky error while waiters drive: every run ends; a GPU-only run on the DOWN device fails, the waiter blocks. */
    @Test
    void aStickyErrorWhileWaitersDriveEndsEveryRunAndLaterWaitersBlock() throws Exception {
        GpuBackend gpu = backend();
        sim.kernel("hts_sticky", l -> {});
        ExecutorService callers = Executors.newFixedThreadPool(4, r -> new Thread(r, "caller-sticky"));
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            List<Future<Object>> all = new ArrayList<>();
            CountDownLatch go = new CountDownLatch(1);
            for (int c = 0; c < 4; c++) {
                int caller = c;
                all.add(callers.submit(() -> {
                    go.await();
                    int ok = 0;
                    for (int i = 0; i < 30; i++) {
                        Task<?>[] out = new Task<?>[1];
                        try {
                            GraphRun run = s.execute(sumGraph("s-" + caller + "-" + i, i, out));
                            assertThat(run.result(out[0])).isEqualTo((float) N * i);
                            ok++;
                        } catch (GraphRunException ex) {
                            // after the device went down
                        }
                        if (caller == 0 && i == 10) {
                            sim.failNext("cuEventQuery", 700);
                        }
                    }
                    return ok;
                }));
            }
            go.countDown();
            for (Future<Object> f : all) {
                f.get(60, TimeUnit.SECONDS);
            }
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> gpu.status().health().name().equals("DOWN"));
            // a GPU-only graph on the DOWN device: the waiter must not spin, the run fails
            TaskGraph g = TaskGraph.named("down");
            g.task("t").gpu(ctx -> 1f);
            Object r = onCaller("caller-down", Duration.ofSeconds(5), () -> {
                try {
                    return s.execute(g);
                } catch (GraphRunException ex) {
                    return ex;
                }
            });
            assertThat(r).isInstanceOf(GraphRunException.class);
        } finally {
            callers.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ two devices

    /** Many waiters, two devices, chains that follow each other across devices: all right, all back. */
    @Test
    void manyWaitersOnTwoDevicesGetRightResultsAndReturnAllMemory() throws Exception {
        SimulatedCuda two = new SimulatedCuda(256 * MIB).withDevices(2);
        MultiGpuBackend gpus = two.backends(SimulatedCuda.testSettings(4));
        Set<String> bodyThreads = ConcurrentHashMap.newKeySet();
        ExecutorService callers = Executors.newFixedThreadPool(6, r -> new Thread(r, "caller-two"));
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpus).build()) {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> all = new ArrayList<>();
            for (int c = 0; c < 6; c++) {
                int caller = c;
                all.add(callers.submit(() -> {
                    go.await();
                    for (int i = 0; i < 25; i++) {
                        float v = caller * 100 + i;
                        TaskGraph g = TaskGraph.named("two-" + caller + "-" + i);
                        Task<DeviceBuffer> x = g.task("x").gpu(ctx -> {
                            bodyThreads.add(Thread.currentThread().getName());
                            GpuContext ctxg = ctx.unwrap(GpuContext.class);
                            DeviceBuffer b = ctxg.allocate(4 * N);
                            ctxg.kernels().fill(N, v, b);
                            return b;
                        });
                        Task<DeviceBuffer> y = g.task("y").gpu(ctx -> {
                            bodyThreads.add(Thread.currentThread().getName());
                            GpuContext ctxg = ctx.unwrap(GpuContext.class);
                            DeviceBuffer b = ctxg.allocate(4 * N);
                            ctxg.kernels().fill(N, 1f, b);
                            return b;
                        });
                        Task<Object> nothing = g.task("n").after(x).gpu(ctx -> {
                            ctx.unwrap(GpuContext.class).kernels().scale(N, 2f, ctx.input(x));
                            return null;
                        });
                        Task<float[]> back = g.task("back").after(nothing, x, y).gpu(ctx -> {
                            GpuContext ctxg = ctx.unwrap(GpuContext.class);
                            return ctxg.download(ctx.input(x), new float[N]);
                        });
                        GraphRun run = i % 3 == 0 ? s.execute(g) : s.submit(g);
                        if (i % 3 == 1) {
                            run.await(Duration.ofSeconds(20));
                        } else if (i % 3 == 2) {
                            run.await();
                        }
                        float[] r = run.result(back);
                        for (float f : r) {
                            assertThat(f).isEqualTo(2 * v);
                        }
                    }
                    return 0;
                }));
            }
            go.countDown();
            for (Future<Integer> f : all) {
                try {
                    f.get(90, TimeUnit.SECONDS);
                } catch (TimeoutException ex) {
                    fail("hang:\n" + dump());
                }
            }
        } finally {
            callers.shutdownNow();
        }
        assertThat(bodyThreads)
                .as("bodies run on the devices' launchers, or (a root of an execute) on its caller")
                .allSatisfy(name -> assertThat(name).matches("hts-gpu-.*|caller-.*"));
        assertThat(two.allocatedBytes()).isZero();
    }
}
