package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.CpuFirstPolicy;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Ended;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a run's profile derives from its timings: makespan, total work, critical path, ideal gap,
 * waits, per-worker usage, the slowest tasks and per-name statistics. The exact values come from
 * profiles built from chosen timings ({@link RecordedRun}); real runs check the relations the
 * clock cannot break.
 */
class RunProfileTests {

    private static final long US = 1_000;

    /** a, then a group of two (shard[0], shard[1]) after it, then d after the group. */
    private static TaskGraph diamond() {
        TaskGraph g = TaskGraph.named("diamond");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        TaskGroup<Integer> shard = g.group("shard", 2, (i, t) -> t.after(a).cpu(ctx -> i));
        g.task("d").after(shard).cpu(ctx -> 0);
        return g;
    }

    /**
     * Two workers, 500 us: a 0-100 us and shard[0] 100-400 us on worker 0; shard[1], ready at 100
     * us, starts at 150 us and runs 120 us on worker 1, then d 400-450 us there.
     */
    private static RecordedRun diamondRun() {
        return RecordedRun.of(diamond())
                .ran("a", Device.CPU, 0, 0, 100 * US)
                .ran("shard[0]", Device.CPU, 0, 100 * US, 400 * US)
                .ran("shard[1]", Device.CPU, 1, 150 * US, 270 * US)
                .ran("d", Device.CPU, 1, 400 * US, 450 * US)
                .finished(500 * US, RunStatus.SUCCEEDED);
    }

    @Test
    void theSummaryOfARunFollowsFromItsTimings() {
        RunProfile p = diamondRun().profile();
        assertThat(p.makespan()).isEqualTo(Duration.ofNanos(500 * US));
        assertThat(p.totalWork()).isEqualTo(Duration.ofNanos((100 + 300 + 120 + 50) * US));
        assertThat(p.criticalPath().tasks()).containsExactly("a", "shard[0]", "d");
        assertThat(p.criticalPath().length()).isEqualTo(Duration.ofNanos(450 * US));
        // makespan - max(570 us of work / 2 workers, 450 us of critical path)
        assertThat(p.idealGap()).isEqualTo(Duration.ofNanos(50 * US));
        assertThat(p.idealGapRatio()).isEqualTo(0.1);
        assertThat(p.meanWait())
                .as("only shard[1] waited: 50 us over four tasks")
                .isEqualTo(Duration.ofNanos(50 * US / 4));
        assertThat(p.workers())
                .containsExactly(new WorkerUsage(0, 2, 400 * US, 100 * US), new WorkerUsage(1, 2, 170 * US, 330 * US));
    }

    @Test
    void theIdealGapIsWhatTheRunTookBeyondItsWorkSpreadOverTheWorkers() {
        // two independent tasks of 100 us run one after the other on two workers: 200 us of work
        // could have taken 100 us, and so could the longest chain
        TaskGraph g = TaskGraph.named("pair");
        g.task("x").cpu(ctx -> 1);
        g.task("y").cpu(ctx -> 2);
        RunProfile p = RecordedRun.of(g)
                .ran("x", Device.CPU, 0, 0, 100 * US)
                .ran("y", Device.CPU, 0, 100 * US, 200 * US)
                .finished(300 * US, RunStatus.SUCCEEDED)
                .profile();
        assertThat(p.idealGap()).isEqualTo(Duration.ofNanos(200 * US));
        assertThat(p.idealGapRatio()).isEqualTo(200.0 / 300);
        RunProfile instant = RecordedRun.of(g).finished(0, RunStatus.SUCCEEDED).profile();
        assertThat(instant.makespan()).isZero();
        assertThat(instant.idealGapRatio()).as("no makespan, no gap").isZero();
    }

    @Test
    void eachTaskIsReadyWhenTheLastOfItsDependenciesEndedAndWaitsUntilItStarts() {
        RunProfile p = diamondRun().profile();
        assertThat(p.tasks())
                .extracting(TaskTiming::taskName, TaskTiming::readyNanos, TaskTiming::waitNanos)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("a", 0L, 0L),
                        org.assertj.core.groups.Tuple.tuple("shard[0]", 100 * US, 0L),
                        org.assertj.core.groups.Tuple.tuple("shard[1]", 100 * US, 50 * US),
                        org.assertj.core.groups.Tuple.tuple("d", 400 * US, 0L));
        TaskTiming a = p.timing(0);
        assertThat(a.startNanos()).as("a started as the run was submitted").isZero();
        assertThat(a.attempts()).as("and so it made one attempt").isOne();
        assertThat(a.ran()).isTrue();
        assertThat(p.timing(3).statisticsName()).isEqualTo("d");
        assertThat(p.timing(1).statisticsName()).isEqualTo("shard");
    }

    @Test
    void aRealRunsTasksAreReadyWhenTheirLastDependencyEnded() {
        TaskGraph g = TaskGraph.named("join");
        Task<Integer> left = g.task("left").cpu(ctx -> 1);
        Task<Integer> right = g.task("right").cpu(ctx -> 2);
        g.task("join").after(left, right).cpu(ctx -> ctx.input(left) + ctx.input(right));
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            RunProfile p = s.execute(g).profile();
            TaskTiming l = p.timing(0);
            TaskTiming r = p.timing(1);
            TaskTiming join = p.timing(2);
            assertThat(l.readyNanos()).isZero();
            assertThat(r.readyNanos()).isZero();
            assertThat(join.readyNanos()).isEqualTo(Math.max(l.endNanos(), r.endNanos()));
            assertThat(join.waitNanos()).isEqualTo(join.startNanos() - join.readyNanos());
        }
    }

    @Test
    void whereTheWorkersTimeWentReadsInTheProfilesSummaryLine() {
        RunProfile p = diamondRun().profile();
        WorkerTime w = p.workerTime();
        assertThat(w.capacity()).isEqualTo(Duration.ofNanos(2 * 500 * US));
        assertThat(w.work()).isEqualTo(Duration.ofNanos(570 * US));
        assertThat(w.schedulerDelay())
                .as("shard[1] waited 50 us while worker 1 idled")
                .isEqualTo(Duration.ofNanos(50 * US));
        assertThat(w.shapeIdle()).isEqualTo(Duration.ofNanos((1000 - 570 - 50) * US));
        assertThat(p)
                .hasToString("run 1 of graph 'diamond': SUCCEEDED, 4 tasks, makespan 500 us, total work 570 us,"
                        + " critical path 450 us, worker time: 5.00% waits the scheduler caused, 38.00% idle for"
                        + " want of ready tasks");
    }

    @Test
    void theSlowestTasksComeLongestFirst() {
        RunProfile p = diamondRun().profile();
        assertThat(p.slowest(10)).extracting(TaskTiming::taskName).containsExactly("shard[0]", "shard[1]", "a", "d");
        assertThat(p.slowest(2)).extracting(TaskTiming::taskName).containsExactly("shard[0]", "shard[1]");
        assertThat(p.slowest(0)).isEmpty();
        assertThat(p.slowest(-1)).isEmpty();
        assertThat(diamondRun().withoutTimings().slowest(3)).isEmpty();
    }

    @Test
    void aRunsStatisticsAggregateAGroupUnderItsName() {
        // durations under 2048 ns, which HdrHistogram keeps exactly at three significant digits
        RunProfile p = RecordedRun.of(diamond())
                .ran("a", Device.CPU, 0, 0, 100)
                .ran("shard[0]", Device.CPU, 0, 100, 400)
                .ran("shard[1]", Device.CPU, 1, 150, 270)
                .ran("d", Device.CPU, 1, 400, 450, TaskState.FAILED)
                .finished(500, RunStatus.FAILED)
                .profile();
        Map<String, TaskStatistics> stats = p.statistics();
        assertThat(stats).as("every task that ran, the failed one too").containsOnlyKeys("a", "shard", "d");
        assertThat(stats.get("d").count()).isOne();
        assertThat(stats.get("d").failed()).isOne();
        assertThat(stats.get("d").max()).isEqualTo(Duration.ofNanos(50));
        TaskStatistics shard = stats.get("shard");
        assertThat(shard)
                .isEqualTo(new TaskStatistics(
                        "diamond",
                        "shard",
                        2,
                        Duration.ofNanos(210),
                        Duration.ofNanos(120),
                        Duration.ofNanos(300),
                        Duration.ofNanos(300),
                        Duration.ofNanos(300),
                        0,
                        0));
        assertThat(stats.get("a").count()).isOne();
        assertThat(stats.get("a").max()).isEqualTo(Duration.ofNanos(100));
        assertThat(diamondRun().withoutTimings().statistics()).isEmpty();
    }

    @Test
    void ranTotalsCountATaskThatTookNoMeasurableTime() {
        TaskGraph g = TaskGraph.named("blink");
        g.task("blink").cpu(ctx -> 1);
        g.task("later").cpu(ctx -> 2);
        RunProfile p = RecordedRun.of(g)
                .ran("blink", Device.CPU, 0, 10, 10)
                .ran("later", Device.GPU, 0, 10, 30)
                .finished(40, RunStatus.SUCCEEDED)
                .profile();
        List<String> totals = new ArrayList<>();
        p.ranTotals((device, state, count, nanos) -> totals.add(device + "/" + state + " " + count + " " + nanos));
        assertThat(totals).containsExactlyInAnyOrder("CPU/SUCCEEDED 1 0", "GPU/SUCCEEDED 1 20");
        assertThat(p.timing(0).ran()).isTrue();
        assertThat(p.timing(0).durationNanos()).isZero();
    }

    @Test
    void theMakespanOfARunningRunRunsFromItsSubmissionToNowWithOrWithoutTimings() {
        RecordedRun running = RecordedRun.of(diamond())
                .ran("a", Device.CPU, 0, 0, 100 * US)
                .ran("shard[0]", Device.CPU, 0, 100 * US, 300 * US);
        for (boolean timed : new boolean[] {true, false}) {
            long before = System.nanoTime();
            RunProfile p = timed ? running.profile() : running.withoutTimings();
            assertThat(p.status()).isEqualTo(RunStatus.RUNNING);
            Duration makespan = p.makespan();
            assertThat(makespan.toNanos())
                    .as("from the submission to now, timed %s (not to the last ended task)", timed)
                    .isGreaterThanOrEqualTo(before - RecordedRun.SUBMIT)
                    .isLessThanOrEqualTo(System.nanoTime() - RecordedRun.SUBMIT);
        }
    }

    @Test
    void aFinishedRunsMakespanEndsWhenTheRunFinished() {
        RunProfile p = diamondRun().profile();
        assertThat(p.makespan())
                .as("the run finished 50 us after its last task")
                .isEqualTo(Duration.ofNanos(500 * US));
        assertThat(diamondRun().withoutTimings().makespan()).isEqualTo(Duration.ofNanos(500 * US));
    }

    @Test
    void aRealRunsMakespanIsWithinTheTimeAroundItAndEveryWorkersTimeAddsUpToIt() {
        TaskGraph g = TaskGraph.named("fan");
        Task<Integer> root = g.task("root").cpu(ctx -> 1);
        g.group("leaf", 20, (i, t) -> t.after(root).cpu(ctx -> ctx.input(root) + i));
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            long before = System.nanoTime();
            RunProfile p = s.execute(g).profile();
            long after = System.nanoTime();
            assertThat(p.makespan().toNanos()).isBetween(0L, after - before);
            assertThat(p.makespan().toNanos())
                    .isGreaterThanOrEqualTo(p.tasks().stream()
                            .mapToLong(TaskTiming::endNanos)
                            .max()
                            .orElseThrow());
            assertThat(p.workers())
                    .hasSize(2)
                    .allSatisfy(w -> assertThat(w.busyNanos() + w.idleNanos())
                            .isEqualTo(p.makespan().toNanos()));
            assertThat(p.workers().stream().mapToLong(WorkerUsage::busyNanos).sum())
                    .as("every task ran on a CPU worker")
                    .isEqualTo(p.totalWork().toNanos());
        }
    }

    @Test
    void aProfileTakenWhileTheRunGoesOnMeasuresUpToThatMoment() throws Exception {
        for (boolean profiling : new boolean[] {true, false}) {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch holding = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("open");
            Task<Integer> first = g.task("first").cpu(ctx -> 1);
            g.task("held").after(first).cpu(ctx -> {
                holding.countDown();
                return release.await(10, TimeUnit.SECONDS) ? 2 : -1;
            });
            try (Scheduler s =
                    Scheduler.builder().threads(2).profiling(profiling).build()) {
                long before = System.nanoTime();
                GraphRun run = s.submit(g);
                long submitted = System.nanoTime();
                assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
                // let time pass while "held" runs: the makespan runs to the snapshot, not to "first"'s end
                long later = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
                org.awaitility.Awaitility.await()
                        .pollInterval(Duration.ofMillis(1))
                        .until(() -> System.nanoTime() - later >= 0);
                RunProfile snapshot = run.profile();
                long makespan = snapshot.makespan().toNanos();
                long elapsed = System.nanoTime() - before;
                release.countDown();
                run.await();
                assertThat(snapshot.status()).isEqualTo(RunStatus.RUNNING);
                assertThat(makespan).as("profiling %s", profiling).isBetween(later - submitted, elapsed);
                if (profiling) {
                    assertThat(makespan)
                            .isGreaterThanOrEqualTo(snapshot.timing(0).endNanos());
                }
            }
        }
    }

    @Test
    void theProfileNamesThePolicyAndTheNumberOfWorkers() {
        try (Scheduler s =
                Scheduler.builder().threads(3).policy(new CpuFirstPolicy()).build()) {
            RunProfile p = s.execute(diamond()).profile();
            assertThat(p.policy()).isEqualTo("cpu-first");
            assertThat(p.parallelism()).isEqualTo(3);
            assertThat(p.workers()).hasSize(3);
            assertThat(p.graphName()).isEqualTo("diamond");
        }
    }

    /**
     * Two tasks that each wait for the other to start must run at once, so the worker that did not
     * run their dependency steals one of them.
     */
    @Test
    void aStealWhileTheRunWasActiveIsCounted() {
        CountDownLatch bothStarted = new CountDownLatch(2);
        TaskGraph g = TaskGraph.named("steal");
        Task<Integer> root = g.task("root").cpu(ctx -> 1);
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            g.task("waits").after(root).cpu(ctx -> {
                bothStarted.countDown();
                return bothStarted.await(10, TimeUnit.SECONDS) ? 2 : -1;
            });
            g.task("returns").after(root).cpu(ctx -> {
                bothStarted.countDown();
                return bothStarted.await(10, TimeUnit.SECONDS) ? 3 : -1;
            });
            RunProfile p = s.execute(g).profile();
            assertThat(p.steals()).isPositive();
        }
    }

    @Test
    void aTimedOutBodyThatHasNotReturnedIsListedAsAbandoned() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("stuck");
        g.task("stuck").timeout(Duration.ofMillis(20)).cpu(ctx -> {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (release.getCount() > 0 && System.nanoTime() < until) {
                try {
                    release.await(10, TimeUnit.MILLISECONDS); // deaf to the interrupt of its time-out
                } catch (InterruptedException ignored) {
                    // keeps waiting
                }
            }
            return 1;
        });
        g.task("fine").cpu(ctx -> 2);
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            await().atMost(Duration.ofSeconds(10)).until(run::isDone);
            RunProfile p = run.profile();
            assertThat(p.status()).isEqualTo(RunStatus.FAILED);
            assertThat(p.abandoned()).containsExactly("stuck");
            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> run.abandoned().isEmpty());
            assertThat(p.abandoned()).as("a profile is what it was when taken").containsExactly("stuck");
        }
    }

    /**
     * Issue 33 item 8: a snapshot of a run still going counts the task running then with its time
     * so far, in the critical path, the total work and the worker time (its worker is busy, not
     * idle), while its timing still says it has not ended.
     */
    @Test
    void aSnapshotCountsTheTaskRunningThenWithItsTimeSoFar() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("held");
        Task<Integer> first = g.task("first").cpu(ctx -> 1);
        Task<Integer> hold = g.task("hold").after(first).cpu(ctx -> {
            started.countDown();
            release.await();
            return 2;
        });
        g.task("last").after(hold).cpu(ctx -> 3);
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            GraphRun run = s.submit(g);
            try {
                assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                RunProfile snapshot = run.profile();
                assertThat(snapshot.status()).isEqualTo(RunStatus.RUNNING);
                assertThat(snapshot.criticalPath().tasks()).containsExactly("first", "hold");
                assertThat(snapshot.totalWork())
                        .isEqualTo(snapshot.criticalPath().length());
                assertThat(snapshot.criticalPath().length()).isLessThanOrEqualTo(snapshot.makespan());
                assertThat(snapshot.timing(1).ran()).as("hold has not ended").isFalse();
                // the one worker is busy with hold: the work grows, the idle time does not
                await().atMost(Duration.ofSeconds(10)).until(() -> {
                    WorkerTime w = run.profile().workerTime();
                    return w.work().compareTo(w.shapeIdle().plus(w.schedulerDelay())) > 0;
                });
            } finally {
                release.countDown();
            }
            run.await();
        }
    }

    /**
     * Issue 33 item 9: a task that failed counts in its name's statistics, as one that failed, and
     * so does one cancelled while it ran; one cancelled before it started never ran and does not.
     */
    @Test
    void aFailedTaskAndOneCancelledWhileItRanCountInTheStatisticsAsSuch() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).retainedRuns(10).build()) {
            TaskGraph failing = TaskGraph.named("failing");
            Task<Integer> prepare = failing.task("prepare").cpu(ctx -> 7);
            Task<Integer> boom = failing.task("boom").after(prepare).cpu(ctx -> {
                throw new IllegalStateException("bad input");
            });
            failing.task("child").after(boom).cpu(ctx -> ctx.input(boom) + 1);
            GraphRun failed = s.submit(failing);
            Ended.run(failed);
            CountDownLatch holding = new CountDownLatch(1);
            TaskGraph held = TaskGraph.named("held");
            Task<Integer> hold = held.task("hold").cpu(ctx -> {
                holding.countDown();
                new CountDownLatch(1).await(); // until the cancel interrupts it
                return 1;
            });
            held.task("after").after(hold).cpu(ctx -> 2);
            GraphRun cancelled = s.submit(held);
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            cancelled.cancel();
            Ended.run(cancelled);
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> s.profiler().recentRuns().size() == 2);
            Map<String, Map<String, TaskStatistics>> stats = s.profiler().taskStatistics();
            assertThat(stats.get("failing")).containsOnlyKeys("prepare", "boom");
            assertThat(stats.get("failing").get("boom"))
                    .extracting(TaskStatistics::count, TaskStatistics::failed, TaskStatistics::cancelled)
                    .containsExactly(1L, 1L, 0L);
            assertThat(stats.get("failing").get("prepare"))
                    .extracting(TaskStatistics::count, TaskStatistics::failed, TaskStatistics::cancelled)
                    .containsExactly(1L, 0L, 0L);
            assertThat(stats.get("held")).containsOnlyKeys("hold");
            assertThat(stats.get("held").get("hold"))
                    .extracting(TaskStatistics::count, TaskStatistics::failed, TaskStatistics::cancelled)
                    .containsExactly(1L, 0L, 1L);
            assertThat(failed.profile().statistics().get("boom").failed()).isOne();
        }
    }

    @Test
    void aProfileHoldsAtLeastItsPerTaskArraysTheRunsStatesAndItsTopology() {
        int n = 1000;
        TaskGraph g = TaskGraph.named("wide");
        g.group("t", n, (i, t) -> t.cpu(ctx -> i));
        RecordedRun run = RecordedRun.of(g);
        for (int i = 0; i < n; i++) {
            run.ran("t[" + i + "]", Device.CPU, i % 2, i, i + 1);
        }
        RunProfile timed = run.profile();
        long topology = g.compile().estimatedBytes();
        // a task's start and end (8 bytes each), device (1), lane (4) and state (4)
        assertThat(timed.estimatedBytes()).isGreaterThanOrEqualTo(topology + n * (8 + 8 + 1 + 4 + 4));
        RunProfile untimed = run.withoutTimings();
        assertThat(untimed.estimatedBytes())
                .isGreaterThanOrEqualTo(topology + n * 4)
                .isLessThanOrEqualTo(timed.estimatedBytes() - n * (8 + 8 + 1 + 4));
        String why = "x".repeat(1000);
        RunProfile failed = run.causes(
                        TaskCauses.collect(n, i -> i == 3 ? new IllegalStateException() : null, t -> why))
                .profile();
        assertThat(failed.estimatedBytes())
                .as("with the text of a cause, and its index (4 bytes a task)")
                .isGreaterThanOrEqualTo(timed.estimatedBytes() + why.length() + n * 4);
        RunProfile retried = run.attempts("t[0]", 2).profile();
        assertThat(retried.estimatedBytes())
                .as("with attempts (4 bytes a task)")
                .isGreaterThanOrEqualTo(failed.estimatedBytes() + n * 4);
    }
}
