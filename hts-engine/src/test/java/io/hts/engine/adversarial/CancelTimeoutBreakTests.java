package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CancelTimeoutBreakTests {

    static final Duration MAX = Duration.ofSeconds(30);

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(3));
    }

    @Test
    void aCancelFromTheLastBodyThatReturnsTrueNeverLetsTheRunSucceed() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                for (int k = 0; k < 300; k++) {
                    TaskGraph g = TaskGraph.named("self-cancel-" + k);
                    AtomicReference<GraphRun> self = new AtomicReference<>();
                    AtomicBoolean cancelled = new AtomicBoolean();
                    CountDownLatch submitted = new CountDownLatch(1);
                    Task<Integer> a = g.task("a").cpu(ctx -> 1);
                    g.task("last").after(a).cpu(ctx -> {
                        submitted.await(5, TimeUnit.SECONDS);
                        cancelled.set(self.get().cancel());
                        return 2;
                    });
                    GraphRun run = s.submit(g);
                    self.set(run);
                    submitted.countDown();
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    if (cancelled.get()) {
                        assertThat(run.status())
                                .as("cancel() returned true in round " + k + ", states " + run.states())
                                .isNotEqualTo(RunStatus.SUCCEEDED);
                    }
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aCancelFromAListenerOnTheLastTaskSucceededThatReturnsTrueNeverLetsTheRunSucceed() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicReference<GraphRun> current = new AtomicReference<>();
            AtomicInteger trues = new AtomicInteger();
            ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(e -> {
                        GraphRun r = current.get();
                        if (r != null
                                && r.runId() == e.runId()
                                && "last".equals(e.taskName())
                                && e.type() == EventType.TASK_SUCCEEDED) {
                            if (r.cancel()) {
                                trues.incrementAndGet();
                                r.future().whenComplete((x, ex) -> {
                                    if (r.status() == RunStatus.SUCCEEDED) {
                                        problems.add("run " + r.runId() + " SUCCEEDED after cancel() returned true");
                                    }
                                });
                            }
                        }
                        if (r != null && r.runId() == e.runId() && e.type() == EventType.RUN_SUCCEEDED && r.cancel()) {
                            problems.add("cancel() returned true on RUN_SUCCEEDED of run " + r.runId());
                        }
                    })
                    .build();
            try {
                for (int k = 0; k < 300; k++) {
                    TaskGraph g = TaskGraph.named("listener-cancel-" + k);
                    CountDownLatch go = new CountDownLatch(1);
                    Task<Integer> a = g.task("a").cpu(ctx -> {
                        go.await(5, TimeUnit.SECONDS);
                        return 1;
                    });
                    g.task("last").after(a).cpu(ctx -> 2);
                    GraphRun run = s.submit(g);
                    current.set(run);
                    go.countDown();
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                }
                assertThat(problems).isEmpty();
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void closeFromInsideABodyDoesNotDeadlock() {
        assertTimeoutPreemptively(Duration.ofSeconds(15), () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            TaskGraph g = TaskGraph.named("close-inside");
            Task<Integer> a = g.task("a").cpu(ctx -> {
                try {
                    s.close();
                } catch (Throwable ex) {
                    thrown.set(ex);
                }
                return 1;
            });
            GraphRun run = s.submit(g);
            Checks.awaitEnd(run, Duration.ofSeconds(5));
            Checks.assertConsistent(run);
            assertThat(s.awaitTermination(Duration.ofSeconds(5))).isTrue();
        });
    }

    @Test
    void closeFromInsideAListenerDoesNotDeadlock() {
        assertTimeoutPreemptively(Duration.ofSeconds(15), () -> {
            AtomicReference<Scheduler> ref = new AtomicReference<>();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(e -> {
                        if (e.type() == EventType.TASK_STARTED) {
                            ref.get().close();
                        }
                    })
                    .build();
            ref.set(s);
            TaskGraph g = TaskGraph.named("close-listener");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            g.task("b").after(a).cpu(ctx -> 2);
            GraphRun run = s.submit(g);
            Checks.awaitEnd(run, Duration.ofSeconds(5));
            Checks.assertConsistent(run);
            assertThat(s.awaitTermination(Duration.ofSeconds(5))).isTrue();
        });
    }

    @Test
    void shutdownNowFromInsideABodyCancelsTheRunAndTerminates() {
        assertTimeoutPreemptively(Duration.ofSeconds(15), () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            TaskGraph g = TaskGraph.named("shutdownnow-inside");
            Task<Integer> a = g.task("a").cpu(ctx -> {
                s.shutdownNow();
                return 1;
            });
            Task<Integer> b = g.task("b").after(a).cpu(ctx -> 2);
            GraphRun run = s.submit(g);
            GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
            Checks.assertConsistent(run);
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(s.awaitTermination(Duration.ofSeconds(5))).isTrue();
        });
    }

    @Test
    void retriesOfBodiesThatIgnoreTheirTimeOutEndOnOneWorker() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(1).build();
            try {
                TaskGraph g = TaskGraph.named("stubborn");
                AtomicInteger attempts = new AtomicInteger();
                Task<Integer> t = g.task("t")
                        .timeout(Duration.ofMillis(30))
                        .retries(2, Duration.ZERO)
                        .cpu(ctx -> {
                            attempts.incrementAndGet();
                            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(150);
                            while (System.nanoTime() < until) {
                                Thread.onSpinWait();
                            }
                            return 1;
                        });
                Task<Integer> child = g.task("child").after(t).cpu(ctx -> 2);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                assertThat(ex.getCause()).isInstanceOf(TimeoutException.class);
                Checks.assertConsistent(run);
                assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
                assertThat(run.state(child)).isEqualTo(TaskState.CANCELLED);
                assertThat(run.failures().get(0).attempts()).isEqualTo(3);
                RunProfile p = run.profile();
                p.toChromeTrace();
                p.toDot();
                p.criticalPath();
                p.idealGap();
                p.workerTime();
                p.workers();
                p.statistics();
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(3))
                        .until(() -> run.abandoned().isEmpty());
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void cancellingADuringAHugeBackoffEndsTheRunAtOnce() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("huge-backoff");
                CountDownLatch failed = new CountDownLatch(1);
                Task<Integer> t = g.task("t")
                        .retries(5, Duration.ofDays(36_525))
                        .cpu(ctx -> {
                            failed.countDown();
                            throw new IllegalStateException("again");
                        });
                GraphRun run = s.submit(g);
                assertThat(failed.await(5, TimeUnit.SECONDS)).isTrue();
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(2))
                        .until(() -> run.state(t) == TaskState.RETRYING);
                assertThat(run.cancel(t)).isTrue();
                Checks.awaitEnd(run, Duration.ofSeconds(2));
                Checks.assertConsistent(run);
                assertThat(run.state(t)).isEqualTo(TaskState.CANCELLED);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void resourcesAreAllBackAfterFailuresCancelsAndTimeouts() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .resource("io", 3)
                    .resource("db", 2)
                    .build();
            try {
                SplittableRandom random = new SplittableRandom(7);
                for (int round = 0; round < 20; round++) {
                    TaskGraph g = TaskGraph.named("res-" + round);
                    List<Task<Integer>> tasks = new ArrayList<>();
                    for (int i = 0; i < 30; i++) {
                        int kind = random.nextInt(5);
                        var b = g.task("t" + i).resource("io", 1 + random.nextInt(3));
                        if (random.nextBoolean()) {
                            b.resource("db", 1 + random.nextInt(2));
                        }
                        if (i > 0 && random.nextInt(3) == 0) {
                            b.after(tasks.get(random.nextInt(i)));
                        }
                        if (kind == 3) {
                            b.timeout(Duration.ofMillis(5));
                        }
                        if (kind == 4) {
                            b.retries(2, Duration.ofMillis(1));
                        }
                        tasks.add(b.cpu(ctx -> {
                            if (kind == 0) {
                                throw new IllegalStateException("fail");
                            }
                            if (kind == 3 || kind == 4) {
                                Blocking.untilInterrupted(Duration.ofMillis(10));
                            }
                            if (kind == 4 && ctx.attempt() < 2) {
                                throw new IllegalStateException("retry");
                            }
                            return 1;
                        }));
                    }
                    GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
                    if (round % 3 == 0) {
                        run.cancel(tasks.get(random.nextInt(30)));
                    }
                    if (round % 5 == 0) {
                        run.cancel();
                    }
                    Checks.awaitEnd(run, Duration.ofSeconds(10));
                    Checks.assertConsistent(run);
                    org.awaitility.Awaitility.await()
                            .atMost(Duration.ofSeconds(3))
                            .until(() -> run.abandoned().isEmpty());
                    org.awaitility.Awaitility.await()
                            .atMost(Duration.ofSeconds(3))
                            .untilAsserted(() -> {
                                assertThat(s.resources().available("io")).isEqualTo(3);
                                assertThat(s.resources().available("db")).isEqualTo(2);
                            });
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aTaskCancelledWhileRunningThatReturnsAResultIsCancelledWithItsDescendants() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("cancel-running");
                CountDownLatch inBody = new CountDownLatch(1);
                CountDownLatch cancelled = new CountDownLatch(1);
                Task<Integer> a = g.task("a").cpu(ctx -> {
                    inBody.countDown();
                    cancelled.await(5, TimeUnit.SECONDS);
                    return 1;
                });
                Task<Integer> b = g.task("b").after(a).cpu(ctx -> 2);
                Task<Integer> other = g.task("other").cpu(ctx -> 3);
                GraphRun run = s.submit(g);
                assertThat(inBody.await(5, TimeUnit.SECONDS)).isTrue();
                assertThat(run.cancel(a)).isTrue();
                cancelled.countDown();
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(run.state(a)).isEqualTo(TaskState.CANCELLED);
                assertThat(run.state(b)).isEqualTo(TaskState.CANCELLED);
                assertThat(run.state(other)).isEqualTo(TaskState.SUCCEEDED);
                assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
                assertThat(ex).isNotNull();
                assertThat(ex.cancelled()).containsExactlyInAnyOrder("a", "b");
                assertThat(run.error(b).orElseThrow()).isInstanceOf(TaskCancelledException.class);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void awaitFromManyThreadsWhileCancellingAtRandomMoments() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                SplittableRandom random = new SplittableRandom(11);
                for (int round = 0; round < 40; round++) {
                    TaskGraph g = TaskGraph.named("many-await-" + round);
                    Task<Integer> root = g.task("root").cpu(ctx -> 1);
                    TaskGroup<Integer> grp = g.group(
                            "grp",
                            20,
                            (i, t) -> t.after(root).cpu(ctx -> {
                                if (i % 7 == 3) {
                                    Blocking.untilInterrupted(Duration.ofMillis(1));
                                }
                                return ctx.input(root) + i;
                            }));
                    Task<Integer> sum = g.task("sum")
                            .after(grp)
                            .cpu(ctx ->
                                    ctx.inputs(grp).stream().mapToInt(x -> x).sum());
                    GraphRun run = s.submit(g);
                    List<Thread> waiters = new ArrayList<>();
                    ConcurrentLinkedQueue<String> outcomes = new ConcurrentLinkedQueue<>();
                    for (int w = 0; w < 16; w++) {
                        Thread th = new Thread(() -> {
                            try {
                                run.await(Duration.ofSeconds(10));
                                outcomes.add("ok");
                            } catch (GraphRunException ex) {
                                outcomes.add("failed:" + ex.status());
                            } catch (Exception ex) {
                                outcomes.add("other:" + ex);
                            }
                        });
                        th.start();
                        waiters.add(th);
                    }
                    int what = random.nextInt(4);
                    boolean cancelled = false;
                    if (what == 0) {
                        cancelled = run.cancel();
                    } else if (what == 1) {
                        run.cancel(grp);
                    } else if (what == 2) {
                        run.cancel(grp.get(random.nextInt(20)));
                    }
                    for (Thread th : waiters) {
                        th.join(10_000);
                        assertThat(th.isAlive()).isFalse();
                    }
                    Checks.assertConsistent(run);
                    assertThat(outcomes).hasSize(16);
                    assertThat(outcomes.stream().distinct().count())
                            .as(outcomes.toString())
                            .isEqualTo(1);
                    if (run.status() == RunStatus.SUCCEEDED) {
                        assertThat(run.result(sum)).isEqualTo(20 + 190);
                        assertThat(cancelled).isFalse();
                    }
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @ParameterizedTest(name = "profiling {0}")
    @ValueSource(booleans = {true, false})
    void profilesOfFailedAndCancelledRunsWorkWithAndWithoutProfiling(boolean profiling) {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .profiling(profiling)
                    .retainedRuns(0)
                    .retainedProfileBytes(0)
                    .eventBufferSize(0)
                    .build();
            try {
                TaskGraph g = TaskGraph.named("profiles-" + profiling);
                CountDownLatch go = new CountDownLatch(1);
                Task<Integer> a = g.task("a").cpu(ctx -> {
                    throw new IllegalStateException("a failed");
                });
                Task<Integer> b = g.task("b").after(a).cpu(ctx -> 1);
                Task<Integer> slow = g.task("slow").cpu(ctx -> {
                    go.await(5, TimeUnit.SECONDS);
                    return 1;
                });
                GraphRun run = s.submit(g);
                RunProfile during = run.profile();
                during.toChromeTrace();
                during.toDot();
                during.toString();
                go.countDown();
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                RunProfile p = run.profile();
                assertThat(p.status()).isEqualTo(RunStatus.FAILED);
                p.toChromeTrace();
                p.toDot();
                p.toString();
                p.criticalPath();
                p.makespan();
                p.meanWait();
                p.idealGap();
                p.idealGapRatio();
                p.workerTime();
                p.slowest(0);
                p.slowest(100);
                p.statistics();
                p.tasks().forEach(Object::toString);
                s.profiler().taskStatistics();
                s.profiler().slowestTasks(0);
                s.profiler().slowestTasks(5);
                assertThat(s.profiler().recentRuns()).isEmpty();
                GraphRun cancelledRun = s.submit(g);
                cancelledRun.cancel();
                Checks.awaitEnd(cancelledRun, Duration.ofSeconds(5));
                cancelledRun.profile().toChromeTrace();
                cancelledRun.profile().criticalPath();
            } finally {
                closeQuietly(s);
            }
        });
    }
}
