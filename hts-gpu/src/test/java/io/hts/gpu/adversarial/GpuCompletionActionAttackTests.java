package io.hts.gpu.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.EventType;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.exec.GpuUnavailableException;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import io.hts.gpu.support.WaiterFirstCuda;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attacks on completion actions ({@link GpuContext#onDeviceDone}) while callers wait for their
 * runs and drive the device, on the launcher's time settings, and on a launcher stopped by an
 * error that is not the device's.
 */
class GpuCompletionActionAttackTests {

    private static final long MIB = 1L << 20;
    private static final int N = 64;

    private final SimulatedCuda sim = new SimulatedCuda(256 * MIB);

    private interface Handler {
        Object handle(java.lang.reflect.Method method, Object[] args) throws Throwable;
    }

    private CudaApi proxy(Handler handler) {
        return (CudaApi) Proxy.newProxyInstance(
                CudaApi.class.getClassLoader(),
                new Class<?>[] {CudaApi.class},
                (p, method, args) -> handler.handle(method, args));
    }

    private Object invoke(java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(sim, args);
        } catch (InvocationTargetException ex) {
            throw ex.getCause();
        }
    }

    /** One GPU task whose device work fills a buffer, with {@code action} run when it completed. */
    private static TaskGraph withAction(String name, Runnable action, Task<?>[] out) {
        TaskGraph g = TaskGraph.named(name);
        out[0] = g.task("t").gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            c.kernels().fill(N, 1f, c.scratch(4 * N));
            c.onDeviceDone(action);
            return 7f;
        });
        return g;
    }

    /** Runs {@code body} on a daemon thread named {@code name} (a caller of the scheduler), for at most 10 s. */
    static <T> T onCaller(String name, java.util.concurrent.Callable<T> body) throws Exception {
        FutureTask<T> f = new FutureTask<>(body);
        Thread t = new Thread(f, name);
        t.setDaemon(true);
        t.start();
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (TimeoutException ex) {
            throw new AssertionError("hang of " + name + ":\n" + GpuWaiterAssistAttackTests.dump(), ex);
        }
    }

    /**
     * Callers that wait with execute() drive the device between their runs' steps; an action is
     * user code and runs on the launcher only, whoever sees the work complete.
     */
    @Test
    void completionActionsRunOnTheLauncherNeverOnAWaitingCaller() throws Exception {
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(WaiterFirstCuda.backend(sim))
                .build()) {
            Set<String> threads = ConcurrentHashMap.newKeySet();
            onCaller("caller-actions", () -> {
                for (int i = 0; i < 300; i++) {
                    Task<?>[] out = new Task<?>[1];
                    GraphRun run = s.execute(withAction(
                            "where-" + i,
                            () -> threads.add(Thread.currentThread().getName()),
                            out));
                    assertThat(run.result(out[0])).isEqualTo(7f);
                }
                return null;
            });
            assertThat(threads).isNotEmpty().allSatisfy(n -> assertThat(n).startsWith("hts-gpu-"));
        }
        assertThat(sim.allocatedBytes()).isZero();
    }

    /**
     * A slow action, of the caller's run or of another, must not hold a waiting caller past its
     * deadline: await(Duration) times out while the action still runs, and the runs end once it
     * returns.
     */
    @ParameterizedTest(name = "the action of the awaited run: {0}")
    @ValueSource(booleans = {true, false})
    void aSlowActionNeverHoldsAWaitersDeadline(boolean ownRun) throws Exception {
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(WaiterFirstCuda.backend(sim))
                .build()) {
            CountDownLatch release = new CountDownLatch(1);
            Task<?>[] slow = new Task<?>[1];
            GraphRun slowRun = s.submit(withAction("slow", () -> awaitQuietly(release), slow));
            Task<?>[] other = new Task<?>[1];
            GraphRun otherRun = s.submit(withAction("other", () -> {}, other));
            GraphRun awaited = ownRun ? slowRun : otherRun;
            Object outcome;
            try {
                outcome = onCaller("caller-deadline", () -> {
                    try {
                        awaited.await(Duration.ofMillis(300));
                        return "ended";
                    } catch (TimeoutException ex) {
                        return ex;
                    }
                });
            } finally {
                release.countDown();
            }
            if (ownRun) {
                assertThat(outcome).isInstanceOf(TimeoutException.class);
            }
            assertThat(slowRun.await(Duration.ofSeconds(10)).result(slow[0])).isEqualTo(7f);
            assertThat(otherRun.await(Duration.ofSeconds(10)).result(other[0])).isEqualTo(7f);
        }
    }

    /** An interrupt sent to a waiting caller while an action runs is the caller's, not the action's. */
    @Test
    void aWaitersInterruptNeverReachesAnActionAndIsNotLost() throws Exception {
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(WaiterFirstCuda.backend(sim))
                .build()) {
            CountDownLatch inAction = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicBoolean actionInterrupted = new AtomicBoolean();
            Task<?>[] out = new Task<?>[1];
            GraphRun run = s.submit(withAction(
                    "interrupt-waiter",
                    () -> {
                        inAction.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException ex) {
                            actionInterrupted.set(true);
                        }
                    },
                    out));
            assertThat(inAction.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(GpuWaiterAssistAttackTests.interruptedWaiter(run)).isInstanceOf(InterruptedException.class);
            release.countDown();
            assertThat(run.await(Duration.ofSeconds(10)).result(out[0])).isEqualTo(7f);
            assertThat(actionInterrupted).isFalse();
        }
    }

    /** An action that sets its thread's interrupt flag leaks it neither to a caller nor to the launcher. */
    @Test
    void anActionsInterruptLeaksNeitherToCallersNorToTheLauncher() throws Exception {
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(WaiterFirstCuda.backend(sim))
                .build()) {
            AtomicReference<Thread> launcher = new AtomicReference<>();
            Object leaked = onCaller("caller-leak", () -> {
                for (int i = 0; i < 300; i++) {
                    Task<?>[] out = new Task<?>[1];
                    s.execute(withAction(
                            "leak-" + i,
                            () -> {
                                launcher.set(Thread.currentThread());
                                Thread.currentThread().interrupt();
                            },
                            out));
                    if (Thread.interrupted()) {
                        return "caller interrupted after run " + i;
                    }
                }
                return "never";
            });
            assertThat(leaked).isEqualTo("never");
            GpuWaiterAssistAttackTests.assertIdleLauncherSleeps(launcher.get());
        }
    }

    /** A poll spin too long for a count of nanoseconds (FOREVER) is a day: the device keeps working. */
    static Stream<Duration> pollSpinsBeyondNanoseconds() {
        return Stream.of(ChronoUnit.FOREVER.getDuration(), Duration.ofDays(300 * 365));
    }

    @ParameterizedTest
    @MethodSource("pollSpinsBeyondNanoseconds")
    void aPollSpinBeyondNanosecondsKeepsTheDeviceWorking(Duration spin) throws Exception {
        GpuSettings settings = SimulatedCuda.testSettings(4).withPollSpin(spin);
        assertThat(settings.pollSpinNanos()).isEqualTo(GpuSettings.MAX_POLL_SPIN.toNanos());
        GpuBackend gpu = sim.backend(settings);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            for (int i = 0; i < 20; i++) {
                Task<?>[] out = new Task<?>[1];
                assertThat(s.execute(withAction("spin-" + i, () -> {}, out)).result(out[0]))
                        .isEqualTo(7f);
            }
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.UP);
        }
        assertThat(sim.allocatedBytes()).isZero();
    }

    /**
     * A launcher stopped by an error that is not the device's (here the event query throws an
     * IllegalStateException): its task fails, the device goes DOWN, and closing gives every byte of
     * device and pinned memory back (a poisoned context is the only one whose memory stays).
     */
    @Test
    void aLauncherStoppedByANonCudaErrorReleasesTheDevicesMemory() throws Exception {
        AtomicBoolean broken = new AtomicBoolean();
        CudaApi api = proxy((method, args) -> {
            if (broken.get() && method.getName().equals("isComplete")) {
                throw new IllegalStateException("test: a bug outside CUDA");
            }
            return invoke(method, args);
        });
        sim.autoRun(false);
        GpuBackend gpu = sim.backendThrough(api, 4);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("stopped");
            g.task("t").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.scratch(4 * N);
                c.kernels().fill(N, 1f, b);
                return c.download(b, new float[N]);
            });
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(10)).until(() -> sim.queuedWork() > 0);
            broken.set(true);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10)))
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseMessage("test: a bug outside CUDA")
                    .satisfies(ex -> assertThat(ex.getCause()).isInstanceOf(GpuUnavailableException.class));
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DOWN);
        }
        assertThat(sim.allocatedBytes()).isZero();
        assertThat(sim.pinnedBuffers()).isZero();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
    /**
     * An action that registers another action, or asks for device memory, once the task's work has
     * completed: refused, so its task fails naming it; the run ends, the device keeps working and
     * nothing leaks (it stopped the launcher, leaving the run unfinished for ever).
     */
    @ParameterizedTest(name = "asking for memory: {0}")
    @ValueSource(booleans = {false, true})
    void anActionRegisteringMoreFailsItsTaskAndTheDeviceGoesOn(boolean memory) throws Exception {
        GpuBackend gpu = sim.backend(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("nested-" + memory);
            Task<Float> t = g.task("t").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(N, 1f, c.scratch(4 * N));
                c.onDeviceDone(() -> {
                    if (memory) {
                        c.scratch(4 * N);
                    } else {
                        c.onDeviceDone(() -> {});
                    }
                });
                return 1f;
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10)))
                    .isInstanceOf(GraphRunException.class)
                    .hasStackTraceContaining("task 't': its device work has completed");
            Task<?>[] out = new Task<?>[1];
            assertThat(s.execute(withAction("after-" + memory, () -> {}, out)).result(out[0]))
                    .isEqualTo(7f);
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.UP);
        }
        assertThat(sim.allocatedBytes()).isZero();
    }

    // ------------------------------------------------------------------ callbacks on callers' threads

    /**
     * A listener that interrupts its own thread on {@code type}, with GPU runs submitted and
     * awaited by one caller: submit() makes the root READY on the caller's thread, and the waiting
     * caller nearly always finds the work done and reports it (TASK_SUCCEEDED) itself. The
     * listener's flag is its own: the caller's await never throws InterruptedException for it and
     * the caller is never left interrupted.
     */
    private String listenerInterruptOutcome(EventType type, Set<String> onCaller) throws Exception {
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(WaiterFirstCuda.backend(sim))
                .listener(e -> {
                    if (e.type() == type) {
                        if (Thread.currentThread().getName().startsWith("caller")) {
                            onCaller.add(e.type().toString());
                        }
                        Thread.currentThread().interrupt();
                    }
                })
                .build()) {
            return onCaller("caller-listener", () -> {
                for (int i = 0; i < 200; i++) {
                    TaskGraph g = TaskGraph.named("l-" + i);
                    Task<float[]> t = filledWithTwos(g);
                    GraphRun run = s.submit(g);
                    String wrong = interruptedWaiting(run, i);
                    if (wrong != null) {
                        return wrong;
                    }
                    assertThat(run.result(t)[0]).isEqualTo(2f);
                }
                return "never";
            });
        }
    }

    /** A GPU task that downloads a buffer filled with 2s. */
    private static Task<float[]> filledWithTwos(TaskGraph g) {
        return g.task("t").gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.scratch(4 * N);
            c.kernels().fill(N, 2f, b);
            return c.download(b, new float[N]);
        });
    }

    /** Awaits {@code run}: what went wrong with the caller's interrupt flag, or null. */
    private static String interruptedWaiting(GraphRun run, int i) throws Exception {
        try {
            run.await(Duration.ofSeconds(10));
        } catch (InterruptedException ex) {
            return "await interrupted at run " + i;
        }
        return Thread.interrupted() ? "flag set after run " + i : null;
    }

    @Test
    void aListenerInterruptingItselfOnTaskReadyNeverInterruptsTheSubmittingCaller() throws Exception {
        Set<String> onCaller = ConcurrentHashMap.newKeySet();
        assertThat(listenerInterruptOutcome(EventType.TASK_READY, onCaller)).isEqualTo("never");
        assertThat(onCaller).as("events the caller's thread published").contains("TASK_READY");
    }

    @Test
    void aListenerInterruptingItselfOnCompletionNeverInterruptsTheWaitingCallerThatReportsIt() throws Exception {
        Set<String> onCaller = ConcurrentHashMap.newKeySet();
        assertThat(listenerInterruptOutcome(EventType.TASK_SUCCEEDED, onCaller)).isEqualTo("never");
        assertThat(onCaller).as("events the caller's thread published").contains("TASK_SUCCEEDED");
    }

    /**
     * A whenDone stage and a stage on the run's future that interrupt their own thread: the
     * waiting caller that reports the task's end (and so the run's) runs them, or they run on the
     * launcher; either way the caller is not left interrupted.
     */
    @Test
    void stagesInterruptingThemselvesNeverInterruptTheWaitingCaller() throws Exception {
        Set<String> stageThreads = ConcurrentHashMap.newKeySet();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(WaiterFirstCuda.backend(sim))
                .build()) {
            String outcome = onCaller("caller-stage", () -> {
                for (int i = 0; i < 200; i++) {
                    TaskGraph g = TaskGraph.named("st-" + i);
                    Task<float[]> t = filledWithTwos(g);
                    GraphRun run = s.submit(g);
                    Runnable stage = () -> {
                        stageThreads.add(Thread.currentThread().getName());
                        Thread.currentThread().interrupt();
                    };
                    run.whenDone(t).thenRun(stage);
                    run.future().thenRun(stage);
                    String wrong = interruptedWaiting(run, i);
                    if (wrong != null) {
                        return wrong;
                    }
                }
                return "never";
            });
            assertThat(outcome).as("stages ran on %s", stageThreads).isEqualTo("never");
            assertThat(stageThreads)
                    .as("threads the stages ran on")
                    .anySatisfy(n -> assertThat(n).startsWith("caller"));
        }
    }
}
