package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBarrier;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.CapturedErr;
import io.hts.engine.support.Ended;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Adversarial checks of two promises of docs/engine.md "Observability": a run that does not
 * succeed is logged exactly once when it ends (logger io.hts.engine.run.FailedRunLog; slf4j-simple
 * writes to System.err in these tests), and {@code run.profile().tasks()} lists every task with its
 * final state and, for a FAILED or CANCELLED one, its cause, also with profiling off and in the
 * profiler's kept profiles.
 */
class ObservabilityAttackTests {

    @RegisterExtension
    final CapturedErr err = new CapturedErr();

    /** How many FailedRunLog lines are about this run. */
    private int lines(GraphRun run) {
        return err.count("HTS run " + run.runId() + " of graph '" + run.graph().name() + "'");
    }

    /** blocker (waits for the latch) -> a -> b, and an independent group of 3 members. */
    private static TaskGraph blocking(String name, CountDownLatch started, CountDownLatch release) {
        TaskGraph g = TaskGraph.named(name);
        Task<Integer> blocker = g.task("blocker").cpu(ctx -> {
            started.countDown();
            release.await(20, TimeUnit.SECONDS);
            return 1;
        });
        Task<Integer> a = g.task("a").after(blocker).cpu(ctx -> 2);
        g.task("b").after(a).cpu(ctx -> 3);
        g.group("shard", 3, (i, t) -> t.after(blocker).cpu(ctx -> i));
        return g;
    }

    // ===================================================================== FailedRunLog

    @Test
    void concurrentCancelsOfRunTaskAndGroupLogTheRunExactlyOnce() throws Exception {
        ExecutorService cancellers = Executors.newFixedThreadPool(6, r -> {
            Thread t = new Thread(r, "canceller");
            t.setDaemon(true);
            return t;
        });
        try (Scheduler s =
                Scheduler.builder().threads(2).failedRunsLoggedPerMinute(10_000).build()) {
            for (int k = 0; k < 30; k++) {
                CountDownLatch started = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                TaskGraph g = blocking("cc-" + k, started, release);
                GraphRun run = s.submit(g);
                assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                Task<?> blocker = g.find("blocker").orElseThrow();
                Task<?> a = g.find("a").orElseThrow();
                for (int c = 0; c < 6; c++) {
                    int which = c;
                    done.add(cancellers.submit(() -> {
                        go.await(10, TimeUnit.SECONDS);
                        switch (which % 3) {
                            case 0 -> run.cancel();
                            case 1 -> run.cancel(blocker);
                            default -> run.cancel(a);
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> f : done) {
                    f.get(10, TimeUnit.SECONDS);
                }
                release.countDown();
                Ended.run(run);
                assertThat(run.status()).isNotEqualTo(RunStatus.SUCCEEDED);
                assertThat(lines(run))
                        .as("lines about run %s in:%n%s", run.runId(), err.text())
                        .isEqualTo(1);
            }
        } finally {
            cancellers.shutdownNow();
        }
    }

    @Test
    void aTimeOutRacingARunCancelIsLoggedOnce() throws Exception {
        try (Scheduler s =
                Scheduler.builder().threads(2).failedRunsLoggedPerMinute(10_000).build()) {
            for (int k = 0; k < 30; k++) {
                CountDownLatch started = new CountDownLatch(1);
                TaskGraph g = TaskGraph.named("to-" + k);
                Task<Integer> slow = g.task("slow")
                        .timeout(Duration.ofMillis(5))
                        .retries(1, Duration.ZERO)
                        .cpu(ctx -> {
                            started.countDown();
                            new CountDownLatch(1).await(200, TimeUnit.MILLISECONDS);
                            return 1;
                        });
                g.task("after").after(slow).cpu(ctx -> 2);
                GraphRun run = s.submit(g);
                assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                if (k % 2 == 0) {
                    run.cancel();
                }
                Ended.run(run);
                assertThat(lines(run))
                        .as("lines about run %s in:%n%s", run.runId(), err.text())
                        .isEqualTo(1);
            }
        }
    }

    @Test
    void retriedThenSucceededIsNotLoggedRetriedThenFailedOnceWithItsCause() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            AtomicInteger attempts = new AtomicInteger();
            TaskGraph ok = TaskGraph.named("flaky-ok");
            ok.task("flaky").retries(3, Duration.ZERO).cpu(ctx -> {
                if (attempts.incrementAndGet() < 3) {
                    throw new IllegalStateException("transient " + attempts.get());
                }
                return 1;
            });
            GraphRun good = s.submit(ok);
            Ended.run(good);
            assertThat(good.status()).isEqualTo(RunStatus.SUCCEEDED);

            TaskGraph bad = TaskGraph.named("flaky-bad");
            bad.task("always").retries(2, Duration.ZERO).cpu(ctx -> {
                throw new IllegalStateException("permanent failure xyz");
            });
            GraphRun failed = s.submit(bad);
            Ended.run(failed);
            assertThat(lines(good)).as(err.text()).isZero();
            assertThat(lines(failed)).as(err.text()).isEqualTo(1);
            assertThat(err.text()).contains("'always': java.lang.IllegalStateException: permanent failure xyz");
        }
    }

    @Test
    void nestedRunsAreEachLoggedOnce() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            List<GraphRun> inner = new ArrayList<>();
            TaskGraph outer = TaskGraph.named("outer-n");
            outer.task("nest").cpu(ctx -> {
                TaskGraph in = TaskGraph.named("inner-n");
                in.task("deep").cpu(c -> {
                    throw new IllegalArgumentException("deep failure");
                });
                GraphRun r = s.submit(in);
                synchronized (inner) {
                    inner.add(r);
                }
                return r.await().status();
            });
            GraphRun run = s.submit(outer);
            Ended.run(run);
            assertThat(run.status()).isEqualTo(RunStatus.FAILED);
            assertThat(inner).hasSize(1);
            assertThat(lines(inner.get(0))).as(err.text()).isEqualTo(1);
            assertThat(lines(run)).as(err.text()).isEqualTo(1);
        }
    }

    @Test
    void listenersThatThrowRuntimeExceptionsAndErrorsDoNotStopOrDoubleTheLog() {
        AtomicInteger calls = new AtomicInteger();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .listener(e -> {
                    calls.incrementAndGet();
                    if (e.type() == EventType.RUN_FAILED || e.type() == EventType.RUN_CANCELLED) {
                        throw new OutOfMemoryError("listener pretends to be out of memory");
                    }
                    throw new IllegalStateException("listener broken on " + e.type());
                })
                .build()) {
            TaskGraph g = TaskGraph.named("lis");
            Task<Integer> boom = g.task("boom").cpu(ctx -> {
                throw new IllegalStateException("body failure");
            });
            g.task("child").after(boom).cpu(ctx -> 1);
            GraphRun run = s.submit(g);
            Ended.run(run);
            assertThat(calls.get()).isPositive();
            assertThat(lines(run)).as(err.text()).isEqualTo(1);

            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            GraphRun cancelled = s.submit(blocking("lis-c", started, release));
            awaitLatch(started);
            cancelled.cancel();
            release.countDown();
            Ended.run(cancelled);
            assertThat(lines(cancelled)).as(err.text()).isEqualTo(1);
        }
    }

    @Test
    void aListenerThatCancelsTheRunFromItsFailureEventLogsOnce() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            List<GraphRun> runs = new ArrayList<>();
            s.addListener(e -> {
                if (e.type() == EventType.TASK_FAILED || e.type() == EventType.RUN_FAILED) {
                    synchronized (runs) {
                        runs.forEach(GraphRun::cancel);
                    }
                }
            });
            TaskGraph g = TaskGraph.named("lis-cancel");
            Task<Integer> boom = g.task("boom").cpu(ctx -> {
                throw new IllegalStateException("body failure");
            });
            g.task("child").after(boom).cpu(ctx -> 1);
            g.task("independent").cpu(ctx -> 1);
            GraphRun run;
            synchronized (runs) {
                run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
                runs.add(run);
            }
            Ended.run(run);
            assertThat(lines(run)).as(err.text()).isEqualTo(1);
        }
    }

    @Test
    void theRateLimitHoldsUnderConcurrentFailures() throws Exception {
        ExecutorService submitters = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "submitter");
            t.setDaemon(true);
            return t;
        });
        try (Scheduler s =
                Scheduler.builder().threads(2).failedRunsLoggedPerMinute(5).build()) {
            List<Future<GraphRun>> runs = new ArrayList<>();
            CountDownLatch go = new CountDownLatch(1);
            for (int k = 0; k < 40; k++) {
                int n = k;
                runs.add(submitters.submit(() -> {
                    go.await(10, TimeUnit.SECONDS);
                    TaskGraph g = TaskGraph.named("rl-" + n);
                    g.task("x").cpu(ctx -> {
                        throw new IllegalStateException("rl failure");
                    });
                    return Ended.run(s.submit(g));
                }));
            }
            go.countDown();
            for (Future<GraphRun> f : runs) {
                assertThat(f.get(30, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.FAILED);
            }
            assertThat(err.count("' failed after ")).as(err.text()).isEqualTo(5);
        } finally {
            submitters.shutdownNow();
        }
    }

    @Test
    void anErrorFromABodyIsLoggedOnceWithItsStack() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("err-body");
            g.task("assert").cpu(ctx -> {
                throw new AssertionError("invariant broken 42");
            });
            GraphRun run = s.submit(g);
            Ended.run(run);
            assertThat(run.status()).isEqualTo(RunStatus.FAILED);
            assertThat(lines(run)).as(err.text()).isEqualTo(1);
            assertThat(err.text())
                    .contains("java.lang.AssertionError: invariant broken 42")
                    .contains("at io.hts.engine.adversarial.ObservabilityAttackTests");
        }
    }

    @Test
    void aCyclicCauseChainStillEndsTheRunAndIsLoggedOnce() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("cyclic");
            g.task("loop").cpu(ctx -> {
                IllegalStateException a = new IllegalStateException("a");
                IllegalArgumentException b = new IllegalArgumentException("b", a);
                a.initCause(b);
                throw a;
            });
            GraphRun run = s.submit(g);
            Ended.run(run);
            assertThat(lines(run)).as(err.text()).isEqualTo(1);
        }
    }

    @Test
    void runsCancelledByCloseAreEachLoggedOnceAndCloseDoesNotThrow() throws Exception {
        List<GraphRun> runs = new ArrayList<>();
        Scheduler s = Scheduler.builder().threads(2).build();
        CountDownLatch started = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        for (int k = 0; k < 3; k++) {
            runs.add(s.submit(blocking("close-" + k, started, release)));
        }
        awaitLatch(started);
        List<GraphRun> cancelled = s.shutdownNow();
        release.countDown();
        s.close();
        for (GraphRun r : runs) {
            Ended.run(r);
        }
        assertThat(cancelled).isNotEmpty();
        for (GraphRun r : runs) {
            if (r.status() != RunStatus.SUCCEEDED) {
                assertThat(lines(r))
                        .as("run %s %s in:%n%s", r.runId(), r.status(), err.text())
                        .isEqualTo(1);
            }
        }
    }

    @Test
    void aRunCancelledBeforeAnyTaskStartsIsLoggedOnceAtInfo() throws Exception {
        CountDownLatch busyStarted = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            // occupy both workers so the next run's tasks cannot start
            List<GraphRun> busy = new ArrayList<>();
            for (int k = 0; k < 2; k++) {
                TaskGraph b = TaskGraph.named("busy-" + k);
                b.task("hold").cpu(ctx -> {
                    busyStarted.countDown();
                    release.await(20, TimeUnit.SECONDS);
                    return 0;
                });
                busy.add(s.submit(b));
            }
            awaitLatch(busyStarted);
            TaskGraph g = TaskGraph.named("never-started");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            g.task("b").after(a).cpu(ctx -> 2);
            GraphRun run = s.submit(g);
            assertThat(run.cancel()).isTrue();
            release.countDown();
            Ended.run(run);
            busy.forEach(Ended::run);
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(lines(run)).as(err.text()).isEqualTo(1);
            assertThat(err.text())
                    .contains("INFO io.hts.engine.run.FailedRunLog - HTS run " + run.runId()
                            + " of graph 'never-started' was cancelled");
            RunProfile p = run.profile();
            assertThat(p.tasks()).hasSize(2).allSatisfy(t -> {
                assertThat(t.state()).isEqualTo(TaskState.CANCELLED);
                assertThat(t.cause())
                        .as("cause of %s", t.taskName())
                        .isNotNull()
                        .contains("cancelled");
            });
        }
    }

    @Test
    void continueModeNamesEveryFailureAndTheFirstCauseIsTheFirstToFail() throws Exception {
        try (Scheduler s =
                Scheduler.builder().threads(2).failureMode(FailureMode.CONTINUE).build()) {
            CountDownLatch firstFailed = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("two-fail");
            s.addListener(e -> {
                if (e.type() == EventType.TASK_FAILED && "early".equals(e.taskName())) {
                    firstFailed.countDown();
                }
            });
            g.task("early").cpu(ctx -> {
                throw new IllegalStateException("early failure");
            });
            g.task("late").cpu(ctx -> {
                firstFailed.await(10, TimeUnit.SECONDS);
                throw new IllegalStateException("late failure");
            });
            GraphRun run = s.submit(g);
            Ended.run(run);
            assertThat(lines(run)).as(err.text()).isEqualTo(1);
            String out = err.text();
            assertThat(out).contains("2 failed (").contains("early failure").contains("late failure");
            assertThat(out.substring(out.indexOf("first cause:")))
                    .startsWith("first cause:")
                    .contains("java.lang.IllegalStateException: early failure");
        }
    }

    // ===================================================================== profiles

    /** load -> boom (throws) -> child -> grandchild; a group of 3 after load; a barrier after the group; tail after the barrier. */
    private static TaskGraph failingShape(String name, String message) {
        TaskGraph g = TaskGraph.named(name);
        Task<Integer> load = g.task("load").cpu(ctx -> 1);
        Task<Integer> boom = g.task("boom").after(load).cpu(ctx -> {
            throw new IllegalStateException(message);
        });
        Task<Integer> child = g.task("child").after(boom).cpu(ctx -> 2);
        g.task("grandchild").after(child).cpu(ctx -> 3);
        TaskGroup<Integer> shards = g.group("shard", 3, (i, t) -> t.after(load).cpu(ctx -> i));
        TaskBarrier joined = g.barrier("joined");
        joined.after(shards);
        g.task("tail").after(joined).after(boom).cpu(ctx -> 4);
        return g;
    }

    private static void everyTaskHasItsStateAndCause(RunProfile p, TaskGraph g, GraphRun run) {
        assertThat(p.tasks()).hasSize(g.size());
        for (TaskTiming t : p.tasks()) {
            assertThat(t.state())
                    .as("state of %s", t.taskName())
                    .isEqualTo(run.states().get(t.taskName()));
            assertThat(t.state().isTerminal())
                    .as("final state of %s", t.taskName())
                    .isTrue();
            if (t.state() == TaskState.FAILED || t.state() == TaskState.CANCELLED) {
                assertThat(t.cause())
                        .as("cause of %s (%s)", t.taskName(), t.state())
                        .isNotNull()
                        .isNotBlank();
            } else {
                assertThat(t.cause())
                        .as("cause of %s (%s)", t.taskName(), t.state())
                        .isNull();
            }
        }
    }

    @Test
    void withProfilingOffTheProfileStillListsEveryTaskWithItsCause() {
        try (Scheduler s = Scheduler.builder().threads(2).profiling(false).build()) {
            TaskGraph g = failingShape("off", "profiling off failure");
            GraphRun run = s.submit(g);
            Ended.run(run);
            RunProfile p = run.profile();
            everyTaskHasItsStateAndCause(p, g, run);
            assertThat(p.tasks().stream()
                            .filter(t -> t.taskName().equals("boom"))
                            .findFirst()
                            .orElseThrow()
                            .cause())
                    .contains("profiling off failure");
            assertThat(p.tasks().stream()
                            .filter(t -> t.taskName().equals("grandchild"))
                            .findFirst()
                            .orElseThrow()
                            .cause())
                    .contains("boom");
        }
    }

    @Test
    void keptProfilesHaveTheSameStatesAndCausesAsTheRunsProfile() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = failingShape("kept", "kept failure");
            GraphRun run = s.submit(g);
            Ended.run(run);
            RunProfile kept = s.profiler().run(run.runId()).orElseThrow();
            everyTaskHasItsStateAndCause(kept, g, run);
            for (int i = 0; i < g.size(); i++) {
                assertThat(kept.tasks().get(i).cause())
                        .isEqualTo(run.profile().tasks().get(i).cause());
                assertThat(kept.tasks().get(i).state())
                        .isEqualTo(run.profile().tasks().get(i).state());
            }
        }
    }

    @Test
    void cancelledTasksGroupMembersAndTimedOutTasksCarryTheirCause() throws Exception {
        try (Scheduler s =
                Scheduler.builder().threads(2).failureMode(FailureMode.CONTINUE).build()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("mixed");
            Task<Integer> gate = g.task("gate").cpu(ctx -> {
                started.countDown();
                release.await(20, TimeUnit.SECONDS);
                return 1;
            });
            Task<Integer> single = g.task("single").after(gate).cpu(ctx -> 1);
            g.task("afterSingle").after(single).cpu(ctx -> 1);
            TaskGroup<Integer> shards =
                    g.group("shard", 4, (i, t) -> t.after(gate).cpu(ctx -> i));
            g.task("afterShards").after(shards).cpu(ctx -> 1);
            g.task("sleepy").timeout(Duration.ofMillis(20)).cpu(ctx -> {
                new CountDownLatch(1).await(2, TimeUnit.SECONDS);
                return 1;
            });
            g.task("fine").after(gate).cpu(ctx -> 5);
            GraphRun run = s.submit(g);
            awaitLatch(started);
            assertThat(run.cancel(single)).isTrue();
            assertThat(run.cancel(shards)).isTrue();
            release.countDown();
            Ended.run(run);
            everyTaskHasItsStateAndCause(run.profile(), g, run);
            everyTaskHasItsStateAndCause(s.profiler().run(run.runId()).orElseThrow(), g, run);
            RunProfile p = run.profile();
            assertThat(p.tasks().stream()
                            .filter(t -> t.taskName().equals("sleepy"))
                            .findFirst()
                            .orElseThrow()
                            .state())
                    .isEqualTo(TaskState.FAILED);
            assertThat(p.tasks().stream()
                            .filter(t -> t.taskName().equals("afterSingle"))
                            .findFirst()
                            .orElseThrow()
                            .cause())
                    .contains("single");
        }
    }

    @Test
    void causesAreRecordedWhenManyRunsAreCancelledAtRandomMoments() throws Exception {
        try (Scheduler s =
                Scheduler.builder().threads(2).failedRunsLoggedPerMinute(0).build()) {
            for (int k = 0; k < 100; k++) {
                TaskGraph g = TaskGraph.named("race-" + k);
                Task<Integer> root = g.task("root").cpu(ctx -> 1);
                TaskGroup<Integer> mid = g.group(
                        "mid",
                        8,
                        (i, t) -> t.after(root).cpu(ctx -> {
                            if (i == 5) {
                                throw new IllegalStateException("mid 5");
                            }
                            return i;
                        }));
                g.task("end").after(mid).cpu(ctx -> 0);
                GraphRun run = s.submit(g);
                if (k % 2 == 0) {
                    run.cancel();
                }
                Ended.run(run);
                everyTaskHasItsStateAndCause(run.profile(), g, run);
            }
        }
    }

    @Test
    void aFailureWhoseToStringAndMessageThrowIsLoggedOnceNotTwice() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("bad-tostring");
            Task<Integer> x = g.task("x").cpu(ctx -> {
                throw new IllegalStateException("hidden") {
                    @Override
                    public String toString() {
                        throw new UnsupportedOperationException("no toString for you");
                    }

                    @Override
                    public String getMessage() {
                        throw new UnsupportedOperationException("no message for you");
                    }
                };
            });
            g.task("y").after(x).cpu(ctx -> 1);
            GraphRun run = s.submit(g);
            Ended.run(run);
            everyTaskHasItsStateAndCause(run.profile(), g, run);
            assertThat(lines(run)).as(err.text()).isEqualTo(1);
        }
    }

    @Test
    void aProfileTakenByARunFailedListenerIsFinalAndComplete() {
        AtomicBoolean checked = new AtomicBoolean();
        List<AssertionError> problems = new ArrayList<>();
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = failingShape("in-listener", "listener failure");
            s.addListener(e -> {
                if (e.type() == EventType.RUN_FAILED) {
                    s.activeRun(e.runId()).ifPresent(r -> {
                        try {
                            everyTaskHasItsStateAndCause(r.profile(), g, r);
                        } catch (AssertionError ex) {
                            synchronized (problems) {
                                problems.add(ex);
                            }
                        }
                    });
                    checked.set(true);
                }
            });
            GraphRun run = s.submit(g);
            Ended.run(run);
            assertThat(checked).isTrue();
            assertThat(problems).isEmpty();
        }
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }

    @Test
    void awaitOfAFailedRunThrowsTheRunExceptionNotSomethingTheLogBroke() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("await-check");
            g.task("x").cpu(ctx -> {
                throw new IllegalStateException("x");
            });
            Throwable t = catchThrowable(() -> s.submit(g).await());
            assertThat(t).isInstanceOf(GraphRunException.class);
        }
    }
}
