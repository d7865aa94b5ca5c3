package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.TaskFailure;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The caller of {@code Scheduler.execute} launches a GPU root itself when the device's launcher is
 * not launching (no hand-off to a thread that must be woken): its interrupt stays its own, the
 * run's other roots are not held back by that body, a busy launcher keeps the task, and every run
 * still ends with the right results under concurrent callers, cancels and failing bodies.
 */
class GpuCallerLaunchTests {

    private static final long MIB = 1L << 20;
    private static final int N = 64;
    /** Enough one-task runs that, with the launcher parked between them, the caller launches some. */
    private static final int TRIES = 200;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    /** A launcher that parks as soon as it is idle, as one does between a service's requests. */
    private GpuBackend backend() {
        return cuda.backend(SimulatedCuda.parkingSettings(2));
    }

    /** One GPU task that fills a buffer, downloads it and records the thread it ran on. */
    private static TaskGraph oneTask(String name, float fill, AtomicReference<Thread> ranOn, Task<?>[] out) {
        TaskGraph g = TaskGraph.named(name);
        out[0] = g.task("fill").gpu(ctx -> {
            ranOn.set(Thread.currentThread());
            GpuContext c = ctx.unwrap(GpuContext.class);
            DeviceBuffer b = c.scratch(4 * N);
            c.kernels().fill(N, fill, b);
            return c.download(b, new float[N]);
        });
        return g;
    }

    /** One round of a test: a run whose GPU root records in {@code ranOn} the thread it ran on. */
    private interface Round {
        void run(int round, AtomicReference<Thread> ranOn) throws Exception;
    }

    /**
     * Plays rounds until the caller launched the root itself in {@code wanted} of them (at most
     * {@link #TRIES} rounds; the launcher takes the others), and asserts that it did at least once.
     */
    private static void untilTheCallerLaunched(int wanted, Round round) throws Exception {
        int onCaller = 0;
        for (int i = 0; i < TRIES && onCaller < wanted; i++) {
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            round.run(i, ranOn);
            onCaller += ranOn.get() == Thread.currentThread() ? 1 : 0;
        }
        assertThat(onCaller).as("rounds whose root the caller launched itself").isPositive();
    }

    @Test
    void executeLaunchesTheRootOnTheCallersThreadAndSubmitLeavesItToTheLauncher() {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            Set<Thread> executed = ConcurrentHashMap.newKeySet();
            for (int i = 0; i < TRIES; i++) {
                AtomicReference<Thread> ranOn = new AtomicReference<>();
                Task<?>[] t = new Task<?>[1];
                GraphRun run = s.execute(oneTask("execute-" + i, i, ranOn, t));
                assertThat((float[]) run.result(t[0])).containsOnly((float) i);
                executed.add(ranOn.get());
            }
            assertThat(executed)
                    .as("the caller launched some roots itself; the launcher the others")
                    .contains(Thread.currentThread())
                    .allSatisfy(th -> assertThat(
                                    th == Thread.currentThread() || th.getName().startsWith("hts-gpu-"))
                            .isTrue());
            for (int i = 0; i < 50; i++) {
                AtomicReference<Thread> ranOn = new AtomicReference<>();
                Task<?>[] t = new Task<?>[1];
                GraphRun run = s.submit(oneTask("submit-" + i, i, ranOn, t)).await();
                assertThat((float[]) run.result(t[0])).containsOnly((float) i);
                assertThat(ranOn.get().getName())
                        .as("a submitted run's body runs on the launcher")
                        .startsWith("hts-gpu-");
            }
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    @Test
    void theCallersInterruptIsKeptFromTheBodyItLaunchesAndGivenBackAfter() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            untilTheCallerLaunched(5, (i, ranOn) -> {
                AtomicBoolean bodySawFlag = new AtomicBoolean(true);
                TaskGraph g = TaskGraph.named("interrupted-" + i);
                g.task("t").gpu(ctx -> {
                    ranOn.set(Thread.currentThread());
                    bodySawFlag.set(Thread.currentThread().isInterrupted());
                    return null;
                });
                Thread.currentThread().interrupt();
                s.execute(g);
                assertThat(Thread.interrupted())
                        .as("the caller's interrupt is given back")
                        .isTrue();
                assertThat(bodySawFlag)
                        .as("a body never sees the caller's interrupt")
                        .isFalse();
            });
        }
    }

    @Test
    void aFlagTheBodySetsOnTheCallerIsTheBodysOwn() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            untilTheCallerLaunched(5, (i, ranOn) -> {
                TaskGraph g = TaskGraph.named("self-interrupt-" + i);
                Task<Integer> t = g.task("t").gpu(ctx -> {
                    ranOn.set(Thread.currentThread());
                    Thread.currentThread().interrupt();
                    return 7;
                });
                assertThat(s.execute(g).result(t)).isEqualTo(7);
                assertThat(Thread.interrupted())
                        .as("the body's own flag does not stay on the caller")
                        .isFalse();
            });
        }
    }

    @Test
    void anInterruptSentToTheCallerWhileItRunsTheBodyIsKeptForTheCaller() throws Exception {
        ExecutorService interrupter = Executors.newSingleThreadExecutor();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            Thread caller = Thread.currentThread();
            untilTheCallerLaunched(3, (i, ranOn) -> {
                CountDownLatch inBody = new CountDownLatch(1);
                AtomicBoolean sent = new AtomicBoolean();
                TaskGraph g = TaskGraph.named("interrupted-meanwhile-" + i);
                Task<Integer> t = g.task("t").gpu(ctx -> {
                    ranOn.set(Thread.currentThread());
                    inBody.countDown();
                    while (!sent.get()) {
                        Thread.onSpinWait(); // a body that does not look at interrupts
                    }
                    return 1;
                });
                Future<?> f = interrupter.submit(() -> {
                    inBody.await();
                    caller.interrupt();
                    sent.set(true);
                    return null;
                });
                GraphRun run = s.execute(g);
                assertThat(Thread.interrupted())
                        .as("another thread's interrupt is the caller's, kept")
                        .isTrue();
                f.get(10, TimeUnit.SECONDS);
                assertThat(run.result(t)).isEqualTo(1);
            });
        } finally {
            interrupter.shutdownNow();
        }
    }

    @Test
    void theRunsOtherRootsAreNotHeldBackByTheGpuRootTheCallerLaunches() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            untilTheCallerLaunched(20, (i, ranOn) -> {
                CountDownLatch cpuRootStarted = new CountDownLatch(1);
                TaskGraph g = TaskGraph.named("roots-" + i);
                Task<Boolean> gpu = g.task("gpu").gpu(ctx -> {
                    ranOn.set(Thread.currentThread());
                    return cpuRootStarted.await(
                            10, TimeUnit.SECONDS); // the CPU root, declared after it, runs meanwhile
                });
                g.task("cpu").cpu(ctx -> {
                    cpuRootStarted.countDown();
                    return null;
                });
                assertThat(s.execute(g).result(gpu))
                        .as("the CPU root ran while the GPU body waited")
                        .isTrue();
            });
        }
    }

    /** A GPU task whose work the device runs in about {@code millis} (the body spins that long). */
    private static TaskGraph timedTask(String name, long millis, AtomicReference<Thread> ranOn) {
        TaskGraph g = TaskGraph.named(name);
        g.task("timed").gpu(ctx -> {
            ranOn.set(Thread.currentThread());
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (System.nanoTime() - end < 0) {
                Thread.onSpinWait();
            }
            return null;
        });
        return g;
    }

    @Test
    void aRootTheCallerLaunchedAndPollsGetsNoWakeCallbackWhileTheLaunchersTasksOfTheSameLengthDo() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            for (int i = 0;
                    i < 5;
                    i++) { // a history: tasks of this name take about 3 ms (over the 1 ms callback bound)
                s.submit(timedTask("history-" + i, 3, new AtomicReference<>())).await();
            }
            int before = cuda.callsOf("cuLaunchHostFunc");
            s.submit(timedTask("submitted", 3, new AtomicReference<>())).await();
            assertThat(cuda.callsOf("cuLaunchHostFunc"))
                    .as("the launcher's 3 ms task wakes it by a callback")
                    .isEqualTo(before + 1);
            untilTheCallerLaunched(3, (i, ranOn) -> {
                int callbacks = cuda.callsOf("cuLaunchHostFunc");
                s.execute(timedTask("executed-" + i, 3, ranOn));
                if (ranOn.get() == Thread.currentThread()) {
                    assertThat(cuda.callsOf("cuLaunchHostFunc"))
                            .as("the caller polls for its own task's end")
                            .isEqualTo(callbacks);
                }
            });
        }
    }

    @Test
    void whenTheCallerStopsPollingItsUncallbackedTaskTheLauncherStillSeesTheEnd() throws Exception {
        ExecutorService callers = Executors.newSingleThreadExecutor();
        try {
            boolean tried = false;
            for (int attempt = 0; attempt < 20 && !tried; attempt++) {
                cuda.autoRun(true);
                try (Scheduler s =
                        Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
                    for (int i = 0; i < 5; i++) { // a history of short tasks: no callbacks for the caller's
                        Task<?>[] t = new Task<?>[1];
                        s.execute(oneTask("short-" + i, i, new AtomicReference<>(), t));
                    }
                    cuda.autoRun(false); // the device holds the next task's work until the test runs it
                    AtomicReference<Thread> ranOn = new AtomicReference<>();
                    AtomicReference<Thread> caller = new AtomicReference<>();
                    Task<?>[] t = new Task<?>[1];
                    int callbacks = cuda.callsOf("cuLaunchHostFunc");
                    Future<GraphRun> run = callers.submit(() -> {
                        caller.set(Thread.currentThread());
                        return s.execute(oneTask("held", 7f, ranOn, t));
                    });
                    await().atMost(Duration.ofSeconds(10)).until(() -> ranOn.get() != null);
                    if (ranOn.get() == caller.get()) {
                        tried = true;
                        assertThat(cuda.callsOf("cuLaunchHostFunc")).isEqualTo(callbacks);
                        // the caller polls a while (50 ms), then blocks on the run like any waiter
                        await().atMost(Duration.ofSeconds(10))
                                .until(() -> caller.get().getState() == Thread.State.WAITING
                                        || caller.get().getState() == Thread.State.TIMED_WAITING);
                    }
                    cuda.runAll(); // the work ends now, with nobody polling and no callback queued
                    cuda.autoRun(true);
                    assertThat((float[]) run.get(10, TimeUnit.SECONDS).result(t[0]))
                            .containsOnly(7f);
                }
            }
            assertThat(tried)
                    .as("the caller launched the held task in one of the attempts")
                    .isTrue();
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    void aBusyLauncherKeepsTheRootAndRunsItItself() throws Exception {
        ExecutorService callers = Executors.newSingleThreadExecutor();
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            CountDownLatch inBody = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph busy = TaskGraph.named("busy");
            busy.task("hold").gpu(ctx -> {
                inBody.countDown();
                return release.await(10, TimeUnit.SECONDS);
            });
            GraphRun first = s.submit(busy);
            assertThat(inBody.await(10, TimeUnit.SECONDS)).isTrue();
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            Task<?>[] t = new Task<?>[1];
            Future<GraphRun> second = callers.submit(() -> s.execute(oneTask("behind", 3f, ranOn, t)));
            await().atMost(Duration.ofSeconds(10)).until(() -> gpu.status().queued() == 1);
            release.countDown();
            assertThat((float[]) second.get(10, TimeUnit.SECONDS).result(t[0])).containsOnly(3f);
            assertThat(ranOn.get().getName())
                    .as("queued behind the launcher's body, run by the launcher")
                    .startsWith("hts-gpu-");
            first.await();
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    void aBodyThatThrowsOnTheCallerFailsItsTaskAndTheDeviceGoesOn() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            untilTheCallerLaunched(5, (i, ranOn) -> {
                TaskGraph g = TaskGraph.named("throws-" + i);
                Task<Object> boom = g.task("boom").gpu(ctx -> {
                    ranOn.set(Thread.currentThread());
                    ctx.unwrap(GpuContext.class).scratch(4 * N);
                    throw new IllegalStateException("boom");
                });
                g.task("after").after(boom).cpu(ctx -> 1);
                assertThatThrownBy(() -> s.execute(g))
                        .isInstanceOf(GraphRunException.class)
                        .hasMessageContaining("boom");
            });
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            Task<?>[] t = new Task<?>[1];
            assertThat((float[])
                            s.execute(oneTask("after-failures", 5f, ranOn, t)).result(t[0]))
                    .containsOnly(5f);
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    @Test
    void aBodyOnTheCallerThatWaitsForANestedGpuRunFailsAtOnceInsteadOfDeadlocking() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            untilTheCallerLaunched(3, (i, ranOn) -> {
                TaskGraph nested = TaskGraph.named("nested-" + i);
                nested.task("inner").gpu(ctx -> 1);
                TaskGraph g = TaskGraph.named("outer-" + i);
                g.task("outer").gpu(ctx -> {
                    ranOn.set(Thread.currentThread());
                    return s.execute(nested);
                });
                assertThatThrownBy(() -> s.execute(g))
                        .isInstanceOf(GraphRunException.class)
                        .hasMessageContaining("would wait for itself");
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> s.activeRuns().isEmpty()); // the nested runs end too
        }
    }

    @Test
    void throughACircuitBreakerTheCallerStillLaunchesTheRoot() {
        CircuitBreaker breaker = CircuitBreaker.of("gpu", CircuitBreakerConfig.ofDefaults());
        DeviceBackend guarded =
                new CircuitBreakingBackend(backend(), breaker, null, CircuitBreakingBackend.WhenOpen.FAIL);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(guarded).build()) {
            Set<Thread> ranOnAll = ConcurrentHashMap.newKeySet();
            for (int i = 0; i < TRIES; i++) {
                AtomicReference<Thread> ranOn = new AtomicReference<>();
                Task<?>[] t = new Task<?>[1];
                assertThat((float[])
                                s.execute(oneTask("guarded-" + i, i, ranOn, t)).result(t[0]))
                        .containsOnly((float) i);
                ranOnAll.add(ranOn.get());
            }
            assertThat(ranOnAll).contains(Thread.currentThread());
            assertThat(breaker.getMetrics().getNumberOfSuccessfulCalls())
                    .as("every call recorded, in its window")
                    .isEqualTo(Math.min(TRIES, breaker.getCircuitBreakerConfig().getSlidingWindowSize()));
            assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /**
     * Callers executing graphs of two GPU roots (one launched by the caller when it can), a CPU root
     * and GPU successors, some bodies failing and runs cancelled at random moments from another
     * thread: every run ends, every task in one final state, every result right, all memory back.
     */
    @Test
    void concurrentCallersWithCancelsAndFailuresEndEveryRunRight() throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(4);
        ExecutorService cancellers = Executors.newSingleThreadExecutor();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(backend()).build()) {
            List<Future<Integer>> all = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                int caller = c;
                all.add(callers.submit(() -> {
                    int ended = 0;
                    for (int i = 0; i < 60; i++) {
                        ThreadLocalRandom r = ThreadLocalRandom.current();
                        float v = caller * 1000 + i;
                        boolean fail = r.nextInt(5) == 0;
                        TaskGraph g = TaskGraph.named("mixed-" + caller + "-" + i);
                        Task<DeviceBuffer> x = g.task("x").gpu(ctx -> {
                            GpuContext gc = ctx.unwrap(GpuContext.class);
                            DeviceBuffer b = gc.allocate(4 * N);
                            gc.kernels().fill(N, v, b);
                            if (fail) {
                                throw new IllegalStateException("x fails");
                            }
                            return b;
                        });
                        Task<DeviceBuffer> y = g.task("y").gpu(ctx -> {
                            GpuContext gc = ctx.unwrap(GpuContext.class);
                            DeviceBuffer b = gc.allocate(4 * N);
                            gc.kernels().fill(N, 1f, b);
                            return b;
                        });
                        Task<Integer> cpu = g.task("cpu").cpu(ctx -> 1);
                        Task<Object> twice = g.task("twice").after(x).gpu(ctx -> {
                            ctx.unwrap(GpuContext.class).kernels().scale(N, 2f, ctx.input(x));
                            return null;
                        });
                        Task<float[]> back = g.task("back")
                                .after(twice, x, y, cpu)
                                .gpu(ctx -> ctx.unwrap(GpuContext.class).download(ctx.input(x), new float[N]));
                        if (r.nextInt(4) == 0) {
                            int spins = r.nextInt(20_000);
                            cancellers.submit(() -> {
                                for (int k = spins; k > 0; k--) {
                                    Thread.onSpinWait();
                                }
                                for (GraphRun active : s.activeRuns()) {
                                    if (active.graph().name().equals(g.name())) {
                                        active.cancel();
                                    }
                                }
                            });
                        }
                        try {
                            GraphRun run = s.execute(g);
                            assertThat(fail)
                                    .as("a run with a failing body does not succeed")
                                    .isFalse();
                            assertThat(run.result(back)).containsOnly(2 * v);
                        } catch (GraphRunException ex) {
                            if (fail && ex.status() == RunStatus.FAILED) {
                                assertThat(ex.failures())
                                        .extracting(TaskFailure::taskName)
                                        .containsExactly("x");
                            } else {
                                assertThat(ex.status())
                                        .as("only a cancel ends a run without a failing body")
                                        .isEqualTo(RunStatus.CANCELLED);
                            }
                        }
                        ended++;
                    }
                    return ended;
                }));
            }
            for (Future<Integer> f : all) {
                assertThat(f.get(60, TimeUnit.SECONDS)).isEqualTo(60);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> s.activeRuns().isEmpty());
        } finally {
            callers.shutdownNow();
            cancellers.shutdownNow();
        }
        assertThat(cuda.allocatedBytes()).isZero();
    }
}
