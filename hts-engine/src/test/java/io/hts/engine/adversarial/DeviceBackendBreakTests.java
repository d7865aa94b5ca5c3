package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DeviceBackendBreakTests {

    static final Duration MAX = Duration.ofSeconds(15);

    static Scheduler scheduler(ScriptedBackend b) {
        return Scheduler.builder()
                .threads(2)
                .gpuBackend(b)
                .policy(new GpuFirstPolicy())
                .build();
    }

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(3));
    }

    @Test
    void completeTwiceAndFailAfterCompleteKeepTheFirstReport() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                if (!t.start(0)) {
                    return;
                }
                Object out = ScriptedBackend.runBody(be, t);
                be.report(t, out);
                be.complete(t, -1);
                be.fail(t, new IllegalStateException("late failure"));
                be.report(t, out);
            });
            Scheduler s = scheduler(b);
            try {
                for (int k = 0; k < 30; k++) {
                    TaskGraph g = TaskGraph.named("twice-" + k);
                    Task<Integer> a = g.task("a").gpu(ctx -> 1);
                    Task<Integer> c = g.task("c").after(a).gpu(ctx -> ctx.input(a) + 1);
                    GraphRun run = s.submit(g);
                    assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                    Checks.assertConsistent(run);
                    assertThat(run.result(c)).isEqualTo(2);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void failThenCompleteKeepsTheFailure() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                if (!t.start(0)) {
                    return;
                }
                be.fail(t, new IllegalStateException("device error"));
                be.complete(t, 42);
            });
            Scheduler s = scheduler(b);
            try {
                TaskGraph g = TaskGraph.named("failthencomplete");
                Task<Integer> a = g.task("a").gpu(ctx -> 1);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                Checks.assertConsistent(run);
                assertThat(run.state(a)).isEqualTo(TaskState.FAILED);
                assertThat(ex.getCause()).hasMessage("device error");
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void completeWithoutStartEndsTheTaskConsistently() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> be.complete(t, 5));
            Scheduler s = scheduler(b);
            try {
                TaskGraph g = TaskGraph.named("nostart");
                Task<Integer> a = g.task("a").gpu(ctx -> 1);
                Task<Integer> c = g.task("c").after(a).cpu(ctx -> ctx.input(a));
                GraphRun run = s.submit(g);
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(run.state(a)).isEqualTo(TaskState.FAILED);
                assertThat(run.error(a))
                        .get()
                        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("without starting it");
                assertThat(run.state(c)).isEqualTo(TaskState.CANCELLED);
                assertThat(b.reportErrors)
                        .as("what the engine threw into the backend")
                        .isEmpty();
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aStartedDeviceTaskThatIsNeverReportedTimesOut() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> t.start(0));
            Scheduler s = scheduler(b);
            try {
                TaskGraph g = TaskGraph.named("silent");
                Task<Integer> a = g.task("a").timeout(Duration.ofMillis(200)).gpu(ctx -> 1);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                assertThat(ex.getCause()).isInstanceOf(TimeoutException.class);
                Checks.assertConsistent(run);
                assertThat(run.abandoned()).containsExactly("a");
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aLateStartAfterACancelReturnsFalseAndLateReportsAreIgnored() {
        assertTimeoutPreemptively(MAX, () -> {
            CountDownLatch dispatched = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<Boolean> started = new AtomicReference<>();
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                dispatched.countDown();
                try {
                    release.await(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                started.set(t.start(0));
                be.complete(t, 99); // misbehaves: reports although start said no
            });
            Scheduler s = scheduler(b);
            try {
                TaskGraph g = TaskGraph.named("latestart");
                Task<Integer> a = g.task("a").gpu(ctx -> 1);
                Task<Integer> c = g.task("c").after(a).cpu(ctx -> ctx.input(a));
                GraphRun run = s.submit(g);
                assertThat(dispatched.await(5, TimeUnit.SECONDS)).isTrue();
                assertThat(run.cancel()).isTrue();
                release.countDown();
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                Checks.assertConsistent(run);
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(2)).until(() -> started.get() != null);
                assertThat(started.get()).isFalse();
                assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
                assertThat(run.state(a)).isEqualTo(TaskState.CANCELLED);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aReportFromAnotherThreadAfterTheRunEndedChangesNothing() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicReference<DeviceTask> kept = new AtomicReference<>();
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                if (!t.start(0)) {
                    return;
                }
                kept.set(t);
                be.complete(t, 1);
            });
            Scheduler s = scheduler(b);
            try {
                TaskGraph g = TaskGraph.named("afterend");
                Task<Integer> a = g.task("a").gpu(ctx -> 1);
                GraphRun run = s.submit(g);
                assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                Thread t = new Thread(() -> {
                    kept.get().fail(new IllegalStateException("after the end"));
                    kept.get().complete(7);
                    kept.get().enqueued(8);
                    kept.get().fallBackToCpu("late");
                });
                AtomicReference<Throwable> thrown = new AtomicReference<>();
                t.setUncaughtExceptionHandler((th, e) -> thrown.set(e));
                t.start();
                t.join(5000);
                assertThat(thrown.get())
                        .as("a late report must be ignored, not thrown")
                        .isNull();
                assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
                assertThat(run.result(a)).isEqualTo(1);
                assertThat(run.failures()).isEmpty();
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void fallBackToCpuAndThenCompletingAnywayCountsTheTaskOnce() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicInteger cpuRuns = new AtomicInteger();
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                boolean fell = t.fallBackToCpu("device went down");
                be.complete(t, 1000); // misbehaves: it should forget the task
                t.start(0);
                be.complete(t, 2000);
            });
            AtomicInteger ends = new AtomicInteger();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(b)
                    .policy(new GpuFirstPolicy())
                    .listener(e -> {
                        if (e.type() == EventType.TASK_SUCCEEDED
                                || e.type() == EventType.TASK_FAILED
                                || e.type() == EventType.TASK_CANCELLED) {
                            ends.incrementAndGet();
                        }
                    })
                    .build();
            try {
                for (int k = 0; k < 30; k++) {
                    ends.set(0);
                    TaskGraph g = TaskGraph.named("fallback-" + k);
                    Task<Integer> a = g.task("a")
                            .bodies(
                                    ctx -> {
                                        cpuRuns.incrementAndGet();
                                        Blocking.untilInterrupted(Duration.ofMillis(2));
                                        return 1;
                                    },
                                    ctx -> 1);
                    Task<Integer> c = g.task("c").after(a).cpu(ctx -> ctx.input(a) + 1);
                    GraphRun run = s.submit(g);
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    assertThat(run.state(a)).isEqualTo(TaskState.SUCCEEDED);
                    assertThat(run.result(a))
                            .as("the CPU body's result, not the backend's late report")
                            .isEqualTo(1);
                    assertThat(run.result(c)).isEqualTo(2);
                    assertThat(ends.get()).isEqualTo(2);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void fallBackToCpuAfterStartIsRefusedOrHarmless() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicInteger cpuRuns = new AtomicInteger();
            AtomicInteger gpuRuns = new AtomicInteger();
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                if (!t.start(0)) {
                    return;
                }
                Object out = ScriptedBackend.runBody(be, t);
                boolean fell = t.fallBackToCpu("oops after start");
                if (!fell) {
                    be.report(t, out);
                }
            });
            Scheduler s = scheduler(b);
            try {
                for (int k = 0; k < 20; k++) {
                    TaskGraph g = TaskGraph.named("fallafter-" + k);
                    Task<Integer> a = g.task("a")
                            .bodies(
                                    ctx -> {
                                        cpuRuns.incrementAndGet();
                                        return 1;
                                    },
                                    ctx -> {
                                        gpuRuns.incrementAndGet();
                                        return 1;
                                    });
                    GraphRun run = s.submit(g);
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    assertThat(run.state(a)).isEqualTo(TaskState.SUCCEEDED);
                }
                assertThat(cpuRuns.get() + gpuRuns.get())
                        .as("each attempt ran one body")
                        .isEqualTo(20);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aBackendWhoseStatusThrowsSendsDualTasksToTheCpu() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = ScriptedBackend.wellBehaved();
            b.statusFailure = new IllegalStateException("status exploded");
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(b).build();
            try {
                TaskGraph g = TaskGraph.named("status");
                Task<Integer> a = g.task("a").bodies(ctx -> 1, ctx -> 1);
                Task<Integer> c = g.task("c").after(a).cpu(ctx -> ctx.input(a) + 1);
                GraphRun run = s.submit(g);
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(run.result(c)).isEqualTo(2);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void onRunCancelledThrowingDoesNotBreakCancel() {
        assertTimeoutPreemptively(MAX, () -> {
            CountDownLatch started = new CountDownLatch(1);
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                if (!t.start(0)) {
                    return;
                }
                started.countDown();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (!t.isCancelled() && System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                be.fail(t, new IllegalStateException("stopped"));
            });
            b.cancelFailure = new IllegalStateException("onRunCancelled exploded");
            Scheduler s = scheduler(b);
            try {
                TaskGraph g = TaskGraph.named("oncancel");
                Task<Integer> a = g.task("a").gpu(ctx -> 1);
                GraphRun run = s.submit(g);
                assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
                AtomicBoolean result = new AtomicBoolean();
                assertThatCode(() -> result.set(run.cancel())).doesNotThrowAnyException();
                assertThat(result.get()).isTrue();
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aBackendWhoseCloseThrowsStillLetsTheSchedulerTerminate() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = new ScriptedBackend(1, (be, t) -> {});
            b.closeFailure = new IllegalStateException("close exploded");
            Scheduler s = scheduler(b);
            int before = Thread.activeCount();
            try {
                s.close();
            } catch (RuntimeException ex) {
                // acceptable if reported, but the threads must end
            }
            assertThat(s.awaitTermination(Duration.ofSeconds(3))).isTrue();
            assertThat(s.isTerminated()).isTrue();
        });
    }

    /** A dispatch that throws an Error, before starting its task or after: the attempt fails, not the run's bookkeeping. */
    @ParameterizedTest(name = "started first: {0}")
    @ValueSource(booleans = {false, true})
    void aDispatchThatThrowsAnErrorFailsTheTaskNotTheRun(boolean startFirst) {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                if (!startFirst || t.start(0)) {
                    throw new StackOverflowError("dispatch overflow");
                }
            });
            b.inline = true;
            Scheduler s = scheduler(b);
            try {
                TaskGraph g = TaskGraph.named("dispatch-error");
                Task<Integer> a = g.task("a").gpu(ctx -> 1);
                Task<Integer> c = g.task("c").after(a).cpu(ctx -> ctx.input(a) + 1);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(ex).isNotNull();
                assertThat(run.state(a)).isEqualTo(TaskState.FAILED);
                assertThat(ex.getCause()).isInstanceOf(StackOverflowError.class).hasMessage("dispatch overflow");
                assertThat(run.state(c)).isEqualTo(TaskState.CANCELLED);
            } finally {
                closeQuietly(s);
            }
        });
    }
}
