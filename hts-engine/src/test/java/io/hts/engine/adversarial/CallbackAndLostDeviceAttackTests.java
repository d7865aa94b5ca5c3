package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Releasable;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.policy.ReadyOrder;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Round 3 of break attempts on two promises: (1) a user's callback's interrupt flag stays its own
 * on every thread that runs it, a caller's included, and an interrupt sent to the caller meanwhile
 * is kept; (2) a device backend that reports an attempt with {@link DeviceTask#failDeviceLost} is
 * never asked to run that task again.
 */
class CallbackAndLostDeviceAttackTests {

    private static final Duration MAX = Duration.ofSeconds(30);
    private static final IllegalStateException LOST = new IllegalStateException("test: the device is lost");

    // ================================================================== helpers

    /** Runs {@code action} on a fresh daemon thread named {@code caller}; bounded. */
    private static <T> T onCaller(Callable<T> action) throws Exception {
        FutureTask<T> f = new FutureTask<>(action);
        Thread t = new Thread(f, "caller");
        t.setDaemon(true);
        t.start();
        try {
            return f.get(MAX.toSeconds(), TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException ex) {
            throw ex.getCause() instanceof Exception e ? e : new RuntimeException(ex.getCause());
        } catch (TimeoutException ex) {
            t.interrupt();
            throw new AssertionError("the caller hung", ex);
        }
    }

    private static boolean onCallerThread() {
        return Thread.currentThread().getName().equals("caller");
    }

    /** A GPU-first scheduler on {@code b} that counts each task's final events in {@code finals}. */
    private static Scheduler countingFinals(ScriptedBackend b, Map<String, AtomicInteger> finals) {
        return Scheduler.builder()
                .threads(2)
                .gpuBackend(b)
                .policy(new GpuFirstPolicy())
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
    }

    /** A CPU-first policy whose readyOrder does {@code onReadyOrder} (on the thread that asks). */
    private static SchedulingPolicy policy(Runnable onReadyOrder) {
        return new SchedulingPolicy() {
            @Override
            public String name() {
                return "round3";
            }

            @Override
            public Device selectDevice(TaskInfo task, SystemStatus status) {
                return Device.CPU;
            }

            @Override
            public ReadyOrder readyOrder() {
                onReadyOrder.run();
                return ReadyOrder.PRIORITY;
            }
        };
    }

    private static TaskGraph oneCpuTask(String name) {
        TaskGraph g = TaskGraph.named(name);
        g.task("t").cpu(ctx -> 7);
        return g;
    }

    private static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(5));
    }

    // ================================================================== promise 1: interrupts

    /**
     * A SchedulingPolicy is one of the callbacks whose flag stays its own. Its readyOrder() is
     * consulted when a CPU task becomes ready, which for a root is on the caller's thread in
     * submit(): a readyOrder that interrupts itself must not leave the caller interrupted.
     */
    @RepeatedTest(3)
    void aPolicyReadyOrderInterruptingItselfOnTheSubmittingCallerDoesNotLeaveTheCallerInterrupted() throws Exception {
        AtomicInteger onCaller = new AtomicInteger();
        Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(policy(() -> {
                    if (onCallerThread()) {
                        onCaller.incrementAndGet();
                    }
                    Thread.currentThread().interrupt();
                }))
                .build();
        try {
            String outcome = onCaller(() -> {
                for (int i = 0; i < 50; i++) {
                    GraphRun run = s.submit(oneCpuTask("ro-" + i));
                    if (Thread.interrupted()) {
                        return "caller left interrupted after submit " + i;
                    }
                    run.await(MAX);
                }
                return "never";
            });
            assertThat(onCaller).as("readyOrder ran on the caller").hasPositiveValue();
            assertThat(outcome).isEqualTo("never");
        } finally {
            closeQuietly(s);
        }
    }

    /** The same policy clearing a flag the caller set before submit(): the caller's interrupt must survive. */
    @RepeatedTest(3)
    void aPolicyReadyOrderClearingTheCallersOwnInterruptDoesNotLoseIt() throws Exception {
        Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(policy(Thread::interrupted))
                .build();
        try {
            String outcome = onCaller(() -> {
                for (int i = 0; i < 50; i++) {
                    Thread.currentThread().interrupt();
                    GraphRun run = s.submit(oneCpuTask("roc-" + i));
                    if (!Thread.interrupted()) {
                        return "the caller's own interrupt was cleared by submit " + i;
                    }
                    run.await(MAX);
                }
                return "never";
            });
            assertThat(outcome).isEqualTo("never");
        } finally {
            closeQuietly(s);
        }
    }

    /**
     * A listener runs on the timer for RUN_STALLED. Several runs stall together, so one watchdog
     * check publishes several RUN_STALLED events in a row on the timer thread. The listener
     * interrupts itself on each: the flag it set must be cleared when it returns, so the next
     * callback on that thread must start with a clear flag.
     */
    @RepeatedTest(3)
    void aRunStalledListenerInterruptingItselfOnTheTimerDoesNotLeaveTheFlagForTheNextCallback() {
        assertTimeoutPreemptively(MAX, () -> {
            int runs = 4;
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch stalled = new CountDownLatch(runs);
            List<String> seen = new CopyOnWriteArrayList<>();
            Scheduler s = Scheduler.builder()
                    .threads(runs + 1)
                    .stallTimeout(Duration.ofMillis(200))
                    .listener(e -> {
                        if (e.type() == EventType.RUN_STALLED) {
                            seen.add(Thread.currentThread().getName() + " entered interrupted="
                                    + Thread.currentThread().isInterrupted());
                            Thread.currentThread().interrupt();
                            stalled.countDown();
                        }
                    })
                    .build();
            try {
                List<GraphRun> all = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    TaskGraph g = TaskGraph.named("stall-" + i);
                    g.task("t").cpu(ctx -> {
                        release.await(MAX.toSeconds(), TimeUnit.SECONDS);
                        return 1;
                    });
                    all.add(s.submit(g));
                }
                assertThat(stalled.await(20, TimeUnit.SECONDS))
                        .as("every run reported stalled")
                        .isTrue();
                release.countDown();
                for (GraphRun r : all) {
                    r.await(MAX);
                }
                assertThat(seen)
                        .as("each RUN_STALLED callback's entry flag")
                        .hasSize(runs)
                        .allSatisfy(x -> assertThat(x).endsWith("interrupted=false"));
            } finally {
                release.countDown();
                closeQuietly(s);
            }
        });
    }

    /** What a misbehaving callback on the caller does to its flag, by mode. */
    private static void misbehave(int m, AtomicBoolean outsideMayCome) {
        switch (m) {
            case 0 -> Thread.currentThread().interrupt();
            case 1 -> Thread.interrupted();
            case 2 -> {
                Thread.currentThread().interrupt();
                Thread.interrupted();
            }
            case 3 -> {
                if (outsideMayCome.get()) { // bounded park: the outside interrupt may wake it
                    LockSupport.parkNanos(200_000);
                }
                Thread.interrupted();
            }
            case 4 -> {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("test: a callback throwing with its flag set");
            }
            default -> {
                // nothing
            }
        }
    }

    /**
     * Fuzz: the caller submits and cancels runs; listeners, whenDone stages, future stages and a
     * result's release() run on the caller and do random things to its flag (interrupt themselves,
     * clear, throw, park until interrupted, interrupt-then-clear); another thread interrupts the
     * caller at a random moment, or not. After submit + cancel (and after the interrupter is
     * joined) the caller's flag must be exactly "was it interrupted by the other thread", except
     * when that interrupt came while a callback that clears its own flag was running: the callback
     * may have cleared it, and no one can tell one interrupt from another (seen once under load).
     */
    @Test
    void fuzzCallbacksOnTheCallerVersusOutsideInterrupts() {
        assertTimeoutPreemptively(Duration.ofSeconds(90), () -> {
            AtomicInteger mode = new AtomicInteger();
            AtomicBoolean outsideMayCome = new AtomicBoolean();
            // the outside interrupt came while a callback that clears the flag ran: that callback may
            // have cleared it (no one can tell an interrupt from another), so either outcome is right
            AtomicBoolean outsideFired = new AtomicBoolean();
            AtomicBoolean swallowable = new AtomicBoolean();
            Runnable misbehave = () -> {
                if (!onCallerThread()) {
                    return;
                }
                int m = Math.floorMod(mode.getAndIncrement(), 6);
                boolean firedBefore = outsideFired.get();
                try {
                    misbehave(m, outsideMayCome);
                } finally {
                    if (m >= 1 && m <= 3 && !firedBefore && outsideFired.get()) {
                        swallowable.set(true);
                    }
                }
            };
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(e -> misbehave.run())
                    .build();
            try {
                Random rnd = new Random(42);
                String outcome = onCaller(() -> {
                    Thread caller = Thread.currentThread();
                    for (int i = 0; i < 1500; i++) {
                        boolean fire = rnd.nextBoolean();
                        long delayNanos = rnd.nextInt(300_000);
                        mode.set(rnd.nextInt(6));
                        outsideMayCome.set(fire);
                        outsideFired.set(false);
                        swallowable.set(false);
                        CountDownLatch go = new CountDownLatch(1);
                        Thread interrupter = new Thread(
                                () -> {
                                    try {
                                        go.await();
                                    } catch (InterruptedException ex) {
                                        return;
                                    }
                                    LockSupport.parkNanos(delayNanos);
                                    if (fire) {
                                        outsideFired.set(true);
                                        caller.interrupt();
                                    }
                                },
                                "interrupter");
                        interrupter.setDaemon(true);
                        interrupter.start();
                        CountDownLatch started = new CountDownLatch(1);
                        CountDownLatch hold = new CountDownLatch(1);
                        TaskGraph g = TaskGraph.named("fz-" + i);
                        Task<Releasable> res = g.task("res").cpu(ctx -> (Releasable) misbehave::run);
                        Task<Integer> blocker = g.task("blocker").cpu(ctx -> {
                            started.countDown();
                            hold.await(MAX.toSeconds(), TimeUnit.SECONDS);
                            return 1;
                        });
                        g.task("reader").after(res, blocker).cpu(ctx -> 2);
                        go.countDown();
                        GraphRun run = s.submit(g);
                        run.whenDone(blocker).whenComplete((r, ex) -> misbehave.run());
                        run.future().whenComplete((r, ex) -> misbehave.run());
                        // wait for the blocker without touching the flag
                        while (started.getCount() > 0) {
                            LockSupport.parkNanos(100_000);
                        }
                        while (run.state(res) != TaskState.SUCCEEDED) {
                            LockSupport.parkNanos(100_000);
                        }
                        run.cancel();
                        long until = System.nanoTime() + MAX.toNanos();
                        while (interrupter.isAlive() && System.nanoTime() < until) {
                            LockSupport.parkNanos(50_000); // join() would consume the interrupt under test
                        }
                        boolean flag = Thread.interrupted();
                        hold.countDown();
                        if (flag != fire && !(fire && swallowable.get())) {
                            return "iteration " + i + ": fired=" + fire + " but the caller's flag is " + flag
                                    + " (mode " + mode.get() + ")";
                        }
                        try {
                            run.await(MAX);
                        } catch (GraphRunException expected) {
                            // cancelled
                        }
                    }
                    return "never";
                });
                assertThat(outcome).isEqualTo("never");
            } finally {
                closeQuietly(s);
            }
        });
    }

    /**
     * A result's release() runs on the caller's thread when its cancel() leaves the result with no
     * reader; a release that interrupts itself must leave the caller clear, and one that clears
     * the flag must not lose an interrupt the caller had before.
     */
    @RepeatedTest(3)
    void aReleaseOnTheCancellingCallerKeepsItsFlagToItself() throws Exception {
        Set<String> releaseThreads = ConcurrentHashMap.newKeySet();
        Scheduler s = Scheduler.builder().threads(2).build();
        try {
            String outcome = onCaller(() -> {
                for (int i = 0; i < 60; i++) {
                    boolean callerFlag = i % 2 == 1;
                    CountDownLatch hold = new CountDownLatch(1);
                    CountDownLatch started = new CountDownLatch(1);
                    TaskGraph g = TaskGraph.named("rel-" + i);
                    Task<Releasable> res = g.task("res").cpu(ctx -> (Releasable) () -> {
                        releaseThreads.add(Thread.currentThread().getName());
                        if (callerFlag) {
                            Thread.interrupted();
                        } else {
                            Thread.currentThread().interrupt();
                        }
                    });
                    Task<Integer> blocker = g.task("blocker").cpu(ctx -> {
                        started.countDown();
                        hold.await(MAX.toSeconds(), TimeUnit.SECONDS);
                        return 1;
                    });
                    g.task("reader").after(res, blocker).cpu(ctx -> 2);
                    GraphRun run = s.submit(g);
                    started.await();
                    while (run.state(res) != TaskState.SUCCEEDED) {
                        LockSupport.parkNanos(100_000);
                    }
                    if (callerFlag) {
                        Thread.currentThread().interrupt();
                    }
                    run.cancel();
                    boolean flag = Thread.interrupted();
                    hold.countDown();
                    if (flag != callerFlag) {
                        return "run " + i + ": caller had flag " + callerFlag + " before cancel, " + flag + " after";
                    }
                    try {
                        run.await(MAX);
                    } catch (GraphRunException expected) {
                        // cancelled
                    }
                }
                return "never";
            });
            assertThat(outcome).as("releases ran on %s", releaseThreads).isEqualTo("never");
        } finally {
            closeQuietly(s);
        }
    }

    /**
     * await() must never run stages hung on future(): a CPU-only run ends on a worker, so a stage
     * hung on future() before await() must never run on the awaiting caller.
     */
    @RepeatedTest(3)
    void awaitNeverRunsStagesHungOnFuture() throws Exception {
        Scheduler s = Scheduler.builder().threads(2).build();
        try {
            Set<String> stageThreads = ConcurrentHashMap.newKeySet();
            String outcome = onCaller(() -> {
                for (int i = 0; i < 300; i++) {
                    CountDownLatch staged = new CountDownLatch(1);
                    int k = i;
                    TaskGraph g = TaskGraph.named("aw-" + i);
                    g.task("t").cpu(ctx -> {
                        staged.await(MAX.toSeconds(), TimeUnit.SECONDS);
                        LockSupport.parkNanos(k % 2 == 0 ? 1 : 50_000);
                        return 1;
                    });
                    GraphRun run = s.submit(g);
                    run.future()
                            .thenRun(() ->
                                    stageThreads.add(Thread.currentThread().getName()));
                    run.future()
                            .thenApply(r -> r)
                            .thenRun(() ->
                                    stageThreads.add(Thread.currentThread().getName()));
                    staged.countDown();
                    run.await(MAX);
                }
                return "done";
            });
            assertThat(outcome).isEqualTo("done");
            assertThat(stageThreads).as("threads that ran future() stages").doesNotContain("caller");
        } finally {
            closeQuietly(s);
        }
    }

    /**
     * A body of scheduler A (on A's worker) submits a run to scheduler B; B's listener runs on A's
     * worker. (a) It interrupts itself: A's body must not see a flag after submit. (b) It
     * swallows an interrupt while A's run is cancelled meanwhile: A's body must keep the
     * engine's interrupt (the cancel), seen right after submit returns.
     */
    private static volatile CountDownLatch inListener = new CountDownLatch(1);

    @RepeatedTest(3)
    void aListenerOfAnotherSchedulerOnAWorkerKeepsItsFlagAndNotTheEnginesCancel() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicReference<String> mode = new AtomicReference<>("self");
            Scheduler b = Scheduler.builder()
                    .threads(1)
                    .listener(e -> {
                        if (e.type() != EventType.RUN_SUBMITTED
                                || !Thread.currentThread().getName().startsWith("a-")) {
                            return;
                        }
                        if (mode.get().equals("self")) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                        inListener.countDown();
                        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                        while (!Thread.currentThread().isInterrupted() && System.nanoTime() < until) {
                            LockSupport.parkNanos(100_000);
                        }
                        if (mode.get().equals("swallow")) {
                            Thread.interrupted(); // swallowed
                        }
                    })
                    .build();
            Scheduler a = Scheduler.builder().threads(2).threadNamePrefix("a-").build();
            try {
                TaskGraph g1 = TaskGraph.named("outer-self");
                Task<Boolean> t1 = g1.task("t").cpu(ctx -> {
                    GraphRun inner = b.submit(oneCpuTask("inner"));
                    boolean flag = Thread.interrupted();
                    inner.await(MAX);
                    return flag;
                });
                assertThat(a.execute(g1).result(t1))
                        .as("B's listener's own flag seen by A's body")
                        .isFalse();

                for (String m : new String[] {"keep", "swallow"}) { // "keep" is the control: it passes
                    mode.set(m);
                    CountDownLatch entered = new CountDownLatch(1);
                    inListener = entered;
                    TaskGraph g2 = TaskGraph.named("outer-cancelled-" + m);
                    AtomicReference<String> seen = new AtomicReference<>();
                    g2.task("t").cpu(ctx -> {
                        b.submit(oneCpuTask("inner2"));
                        seen.set("interrupted=" + Thread.currentThread().isInterrupted() + " cancelled="
                                + ctx.isCancelled());
                        return 1;
                    });
                    GraphRun run = a.submit(g2);
                    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
                    run.cancel();
                    try {
                        run.await(MAX);
                    } catch (GraphRunException expected) {
                        // cancelled
                    }
                    assertThat(seen.get())
                            .as("what A's body saw after B's listener (%s) ran through A's cancel interrupt", m)
                            .isEqualTo("interrupted=true cancelled=true");
                }
            } finally {
                closeQuietly(a);
                closeQuietly(b);
            }
        });
    }

    // ================================================================== promise 2: lost device

    /** A backend that reports every attempt lost (its status stays UP). */
    private static ScriptedBackend alwaysLost() {
        return new ScriptedBackend(2, (be, t) -> {
            if (t.start(0)) {
                t.failDeviceLost(LOST);
            }
        });
    }

    /**
     * A dual-bodied task allowed 3 retries; the device reports attempt 1 lost, so attempt 2 runs on
     * the CPU, whose body fails once. Attempt 3 must not be sent back to the device that was lost:
     * "never asked to run that task again".
     */
    @RepeatedTest(3)
    void aTaskWhoseDeviceWasLostIsNotSentBackToItAfterItsCpuRetryFails() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = alwaysLost();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(b)
                    .policy(new GpuFirstPolicy())
                    .build();
            try {
                AtomicInteger cpuRuns = new AtomicInteger();
                TaskGraph g = TaskGraph.named("lost-then-cpu-fails");
                Task<String> t = g.task("t")
                        .retries(3, Duration.ZERO)
                        .bodies(
                                ctx -> {
                                    if (cpuRuns.incrementAndGet() == 1) {
                                        throw new IllegalStateException("test: the CPU body fails once");
                                    }
                                    return "cpu";
                                },
                                ctx -> "gpu");
                GraphRun run = s.submit(g);
                try {
                    run.await(Duration.ofSeconds(10));
                } catch (GraphRunException ex) {
                    // reported below
                }
                List<Integer> deviceAttempts =
                        b.dispatched.stream().map(DeviceTask::attempt).toList();
                assertThat(deviceAttempts)
                        .as("attempts dispatched to the device that reported attempt 1 lost")
                        .containsExactly(1);
                assertThat(run.state(t)).isEqualTo(TaskState.SUCCEEDED);
                assertThat(run.result(t)).isEqualTo("cpu");
            } finally {
                closeQuietly(s);
            }
        });
    }

    /** The same with a CPU body that always fails: the task ends FAILED, the device asked once only. */
    @RepeatedTest(3)
    void aTaskWhoseDeviceWasLostAndWhoseCpuBodyAlwaysFailsIsAskedOfTheDeviceOnce() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = alwaysLost();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(b)
                    .policy(new GpuFirstPolicy())
                    .build();
            try {
                IllegalStateException cpuError = new IllegalStateException("test: the CPU body fails");
                TaskGraph g = TaskGraph.named("lost-cpu-always-fails");
                Task<String> t = g.task("t")
                        .retries(4, Duration.ZERO)
                        .bodies(
                                ctx -> {
                                    throw cpuError;
                                },
                                ctx -> "gpu");
                GraphRun run = s.submit(g);
                try {
                    run.await(Duration.ofSeconds(10));
                } catch (GraphRunException ex) {
                    // expected
                }
                List<Integer> deviceAttempts =
                        b.dispatched.stream().map(DeviceTask::attempt).toList();
                assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
                assertThat(deviceAttempts)
                        .as("attempts dispatched to the device that reported attempt 1 lost")
                        .containsExactly(1);
            } finally {
                closeQuietly(s);
            }
        });
    }

    /**
     * failDeviceLost twice, failDeviceLost after complete, complete after failDeviceLost, fail
     * then failDeviceLost: the first report wins, exactly one final state and event per task, the
     * run ends, a lost task is never dispatched again.
     */
    @RepeatedTest(3)
    void doubleAndLateLostReportsKeepTheFirstReport() {
        assertTimeoutPreemptively(MAX, () -> {
            ConcurrentLinkedQueue<String> redispatchedAfterLost = new ConcurrentLinkedQueue<>();
            Set<String> lostTasks = ConcurrentHashMap.newKeySet();
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                if (lostTasks.contains(t.taskName())) {
                    redispatchedAfterLost.add(t.taskName() + "#" + t.attempt());
                }
                if (!t.start(0)) {
                    return;
                }
                String n = t.taskName();
                try {
                    if (n.startsWith("lost-twice")) {
                        lostTasks.add(n);
                        t.failDeviceLost(LOST);
                        t.failDeviceLost(new IllegalStateException("second"));
                    } else if (n.startsWith("complete-then-lost")) {
                        t.complete("ok");
                        t.failDeviceLost(LOST);
                    } else if (n.startsWith("lost-then-complete")) {
                        lostTasks.add(n);
                        t.failDeviceLost(LOST);
                        t.complete("late");
                    } else if (n.startsWith("fail-then-lost")) {
                        t.fail(new IllegalStateException("plain"));
                        t.failDeviceLost(LOST);
                    }
                } catch (Throwable ex) {
                    be.reportErrors.add(ex);
                }
            });
            Map<String, AtomicInteger> finals = new ConcurrentHashMap<>();
            Scheduler s = countingFinals(b, finals);
            try {
                TaskGraph g = TaskGraph.named("double-reports");
                Task<String> lt = g.task("lost-twice").retries(2, Duration.ZERO).gpu(ctx -> "gpu");
                Task<String> ltDual =
                        g.task("lost-twice-dual").retries(2, Duration.ZERO).bodies(ctx -> "cpu", ctx -> "gpu");
                Task<String> ctl =
                        g.task("complete-then-lost").retries(2, Duration.ZERO).gpu(ctx -> "gpu");
                Task<String> ltc =
                        g.task("lost-then-complete").retries(2, Duration.ZERO).gpu(ctx -> "gpu");
                Task<String> ftl = g.task("fail-then-lost").retries(0).bodies(ctx -> "cpu", ctx -> "gpu");
                GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
                try {
                    run.await(Duration.ofSeconds(10));
                } catch (GraphRunException ex) {
                    // expected
                }
                assertThat(run.state(lt)).isEqualTo(TaskState.FAILED);
                assertThat(run.error(lt)).containsSame(LOST);
                assertThat(run.result(ltDual)).isEqualTo("cpu");
                assertThat(run.result(ctl)).isEqualTo("ok");
                assertThat(run.state(ltc)).isEqualTo(TaskState.FAILED);
                assertThat(run.error(ltc)).containsSame(LOST);
                assertThat(run.state(ftl)).isEqualTo(TaskState.FAILED);
                assertThat(run.error(ftl).orElseThrow()).hasMessage("plain");
                assertThat(redispatchedAfterLost)
                        .as("dispatched again after a lost report")
                        .isEmpty();
                assertThat(finals)
                        .as("final events per task")
                        .hasSize(5)
                        .allSatisfy((k, v) -> assertThat(v.get()).as(k).isEqualTo(1));
            } finally {
                closeQuietly(s);
            }
        });
    }

    /**
     * Time limit + retries + lost device: attempt 1 times out on the device; its late report is
     * failDeviceLost, which arrives before the retry's backoff ends. The device reported the task
     * lost: it must not be asked to run it again (the retry runs on the CPU, a dual-bodied task).
     */
    @RepeatedTest(3)
    void aLostReportArrivingAfterATimeOutButBeforeTheRetryKeepsTheRetryOffTheDevice() {
        assertTimeoutPreemptively(MAX, () -> {
            CountDownLatch timedOut = new CountDownLatch(1);
            CountDownLatch reportedLost = new CountDownLatch(1);
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                if (!t.start(0)) {
                    return;
                }
                if (t.attempt() == 1) {
                    try {
                        timedOut.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    t.failDeviceLost(LOST);
                    reportedLost.countDown();
                } else {
                    t.complete("gpu");
                }
            });
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(b)
                    .policy(new GpuFirstPolicy())
                    .listener(e -> {
                        if (e.type() == EventType.TASK_TIMED_OUT) {
                            timedOut.countDown();
                        }
                    })
                    .build();
            try {
                TaskGraph g = TaskGraph.named("timeout-then-lost");
                Task<String> t = g.task("t")
                        .timeout(Duration.ofMillis(30))
                        .retries(2, Duration.ofMillis(500))
                        .bodies(ctx -> "cpu", ctx -> "gpu");
                GraphRun run = s.submit(g);
                assertThat(reportedLost.await(10, TimeUnit.SECONDS)).isTrue();
                run.await(Duration.ofSeconds(10));
                assertThat(b.dispatched.stream().map(DeviceTask::attempt).toList())
                        .as("device attempts; attempt 1 was reported lost before attempt 2 was placed")
                        .containsExactly(1);
                assertThat(run.result(t)).isEqualTo("cpu");
            } finally {
                closeQuietly(s);
            }
        });
    }

    /**
     * Fuzz: many tasks, each attempt reported at random (complete, fail, failDeviceLost, twice),
     * random retries and bodies, cancel at a random moment, both failure modes. Invariants: the
     * run ends, every task is in one final state with one final event, a task whose attempt was
     * reported lost is never dispatched to the device again, a GPU-only task that FAILED after a
     * lost report (with no cancel) has LOST as its error.
     */
    @Test
    void fuzzLostReportsRetriesAndCancels() {
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            Random seeds = new Random(7);
            for (int round = 0; round < 60; round++) {
                long seed = seeds.nextLong();
                Random rnd = new Random(seed);
                Set<String> lostTasks = ConcurrentHashMap.newKeySet();
                ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
                ScriptedBackend b = new ScriptedBackend(3, (be, t) -> {
                    Random r = new Random(seed ^ t.taskName().hashCode() ^ t.attempt());
                    if (lostTasks.contains(t.taskName())) {
                        violations.add(t.taskName() + " attempt " + t.attempt() + " dispatched after a lost report");
                    }
                    LockSupport.parkNanos(r.nextInt(200_000));
                    if (!t.start(0)) {
                        return;
                    }
                    LockSupport.parkNanos(r.nextInt(200_000));
                    try {
                        switch (r.nextInt(5)) {
                            case 0 -> t.complete("gpu");
                            case 1 -> t.fail(new IllegalStateException("plain"));
                            case 2 -> {
                                lostTasks.add(t.taskName());
                                t.failDeviceLost(LOST);
                            }
                            case 3 -> {
                                lostTasks.add(t.taskName());
                                t.failDeviceLost(LOST);
                                t.failDeviceLost(LOST);
                            }
                            default -> {
                                t.fail(new IllegalStateException("plain"));
                                t.failDeviceLost(LOST);
                            }
                        }
                    } catch (Throwable ex) {
                        be.reportErrors.add(ex);
                    }
                });
                Map<String, AtomicInteger> finals = new ConcurrentHashMap<>();
                Scheduler s = countingFinals(b, finals);
                try {
                    TaskGraph g = TaskGraph.named("fz-lost-" + round);
                    List<Task<String>> tasks = new ArrayList<>();
                    Map<String, Boolean> gpuOnly = new ConcurrentHashMap<>();
                    for (int i = 0; i < 12; i++) {
                        String name = "t" + i;
                        var tb = g.task(name).retries(rnd.nextInt(3), Duration.ZERO);
                        if (i > 2 && rnd.nextInt(3) == 0) {
                            tb = tb.after(tasks.get(rnd.nextInt(tasks.size())));
                        }
                        boolean only = rnd.nextBoolean();
                        gpuOnly.put(name, only);
                        tasks.add(only ? tb.gpu(ctx -> "gpu") : tb.bodies(ctx -> "cpu", ctx -> "gpu"));
                    }
                    FailureMode mode = rnd.nextBoolean() ? FailureMode.CONTINUE : FailureMode.FAIL_FAST;
                    boolean cancel = rnd.nextInt(3) == 0;
                    GraphRun run = s.submit(g, RunOptions.failureMode(mode));
                    if (cancel) {
                        LockSupport.parkNanos(rnd.nextInt(500_000));
                        run.cancel();
                    }
                    try {
                        run.await(Duration.ofSeconds(10));
                    } catch (GraphRunException ex) {
                        // fine
                    }
                    String where = "seed " + seed + " mode " + mode + " cancel " + cancel;
                    assertThat(violations).as(where).isEmpty();
                    for (Task<String> t : tasks) {
                        assertThat(run.state(t).isTerminal())
                                .as(where + " " + t.name())
                                .isTrue();
                        if (!cancel
                                && mode == FailureMode.CONTINUE
                                && gpuOnly.get(t.name())
                                && run.state(t) == TaskState.FAILED
                                && lostTasks.contains(t.name())) {
                            assertThat(run.error(t)).as(where + " " + t.name()).containsSame(LOST);
                        }
                    }
                    assertThat(finals)
                            .as(where)
                            .allSatisfy((k, v) -> assertThat(v.get()).as(k).isEqualTo(1));
                } finally {
                    closeQuietly(s);
                }
            }
        });
    }
}
