package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBarrier;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.policy.ShortestJobFirstPolicy;
import io.hts.engine.run.Diagnosis;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.NotableEventsOnly;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Attacks on "a CPU-only task with one dependency starts on the worker that ran that dependency,
 * CREATED straight to RUNNING" (DependencyManager.dependencyDoneAndStart), with no listener that
 * wants routine events, through the public API only.
 */
class ContinuationAttackTests {

    private static final Duration MAX = Duration.ofSeconds(30);

    private static Scheduler scheduler(int threads) {
        return Scheduler.builder()
                .threads(threads)
                .listener(new NotableEventsOnly())
                .build();
    }

    /** Every task final, pending zero, a cause for every non-succeeded task, successes only after successes. */
    private static void assertEndedWell(GraphRun run) {
        Checks.assertConsistent(run);
        io.hts.engine.graph.GraphTopology top = run.graph().compile();
        Map<String, TaskState> states = run.states();
        for (int i = 0; i < top.size(); i++) {
            if (states.get(top.name(i)) == TaskState.SUCCEEDED) {
                for (String d : top.predecessorNames(i)) {
                    assertThat(states.get(d))
                            .as("dependency %s of succeeded %s", d, top.name(i))
                            .isEqualTo(TaskState.SUCCEEDED);
                }
            }
        }
    }

    // ------------------------------------------------------------------ diagnose / profile

    /**
     * One worker; a root with two children that each block until released. While the worker is
     * inside one child, the other is queued behind it: its only dependency has succeeded. The
     * diagnosis must not describe it as waiting for a dependency (with an empty list of what it
     * waits on): it is ready, queued.
     */
    @Test
    void diagnoseDoesNotSayAQueuedContinuationWaitsForADependencyThatSucceeded() throws Exception {
        try (Scheduler s = scheduler(1)) {
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("fork");
            Task<Integer> root = g.task("root").cpu(ctx -> 1);
            Task<Integer> a = g.task("a").after(root).cpu(ctx -> {
                entered.countDown();
                release.await(MAX.toSeconds(), TimeUnit.SECONDS);
                return ctx.input(root) + 1;
            });
            Task<Integer> b = g.task("b").after(root).cpu(ctx -> {
                entered.countDown();
                release.await(MAX.toSeconds(), TimeUnit.SECONDS);
                return ctx.input(root) + 2;
            });
            GraphRun run = s.submit(g);
            try {
                assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
                Diagnosis d = run.diagnose();
                RunProfile p = run.profile(); // a snapshot: must not throw
                assertThat(p.tasks()).hasSize(3);
                p.toString();
                for (Diagnosis.Waiting w : d.waiting()) {
                    if (w.state() == TaskState.CREATED) {
                        assertThat(w.waitingOn())
                                .as(
                                        "a CREATED task must name a dependency it waits for; diagnosis:%n%s"
                                                + "%nstates %s",
                                        d, run.states())
                                .isNotEmpty();
                    }
                }
                assertThat(d.frontier())
                        .as("the queued child is on the frontier; diagnosis:%n%s", d)
                        .hasSize(2);
            } finally {
                release.countDown();
            }
            run.await();
            assertThat(run.result(a)).isEqualTo(2);
            assertThat(run.result(b)).isEqualTo(3);
        }
    }

    /** Diagnoses and profiles taken all along chains and trees: they never throw, and RUNNING tasks have only succeeded dependencies. */
    @Test
    void snapshotsTakenWhileChainsRunNeverThrowNorShowARunningTaskBeforeItsDependency() throws Exception {
        ExecutorService watcher = Executors.newSingleThreadExecutor();
        try (Scheduler s = scheduler(2)) {
            for (int round = 0; round < 10; round++) {
                TaskGraph g = TaskGraph.named("snap-" + round);
                List<Task<Long>> nodes = new ArrayList<>();
                nodes.add(g.task("n0").cpu(ctx -> 1L));
                for (int i = 1; i < 3_000; i++) {
                    Task<Long> parent = nodes.get(round % 2 == 0 ? i - 1 : (i - 1) / 2);
                    nodes.add(g.task("n" + i).after(parent).cpu(ctx -> ctx.input(parent) + 1));
                }
                GraphRun run = s.submit(g);
                io.hts.engine.graph.GraphTopology top = g.compile();
                AtomicBoolean stop = new AtomicBoolean();
                Future<Integer> snaps = watcher.submit(() -> {
                    int n = 0;
                    while (!stop.get() && n < 2_000) {
                        Diagnosis d = run.diagnose();
                        d.toString();
                        for (Diagnosis.Waiting w : d.waiting()) {
                            if (w.state() == TaskState.RUNNING) {
                                int ti = g.find(w.taskName()).orElseThrow().index();
                                for (String dep : top.predecessorNames(ti)) {
                                    assertThat(run.state(g.find(dep).orElseThrow()))
                                            .as("dependency of running %s", w.taskName())
                                            .isEqualTo(TaskState.SUCCEEDED);
                                }
                            }
                        }
                        RunProfile p = run.profile();
                        p.tasks().forEach(x -> {});
                        p.criticalPath();
                        p.statistics();
                        p.workers();
                        p.meanWait();
                        n++;
                    }
                    return n;
                });
                run.await(MAX);
                stop.set(true);
                snaps.get(30, TimeUnit.SECONDS);
                assertEndedWell(run);
                for (int i = 0; i < nodes.size(); i++) {
                    long depth = round % 2 == 0 ? i : 31 - Integer.numberOfLeadingZeros(i + 1);
                    assertThat(run.result(nodes.get(i))).isEqualTo(depth + 1);
                }
                RunProfile fin = run.profile();
                fin.toChromeTrace();
                fin.toDot();
            }
        } finally {
            watcher.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ retries, time limits

    /** Chains whose tasks fail their first attempts (some every attempt): each body runs exactly as often as its attempts, results right. */
    @Test
    void retriesAlongChainsRunEachAttemptOnceAndPassResultsOn() throws Exception {
        try (Scheduler s = scheduler(2)) {
            for (int round = 0; round < 20; round++) {
                int n = 300;
                int failForGood = round % 2 == 0 ? -1 : 150 + round;
                AtomicIntegerArray runs = new AtomicIntegerArray(n);
                TaskGraph g = TaskGraph.named("retry-" + round);
                List<Task<Integer>> tasks = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int k = i;
                    Task<Integer> prev = i == 0 ? null : tasks.get(i - 1);
                    var b = g.task("t" + i);
                    if (prev != null) {
                        b.after(prev);
                    }
                    if (k % 3 == 0 || k == failForGood) {
                        b.retries(2, Duration.ZERO);
                    }
                    tasks.add(b.cpu(ctx -> {
                        int attempt = runs.incrementAndGet(k);
                        assertThat(ctx.attempt()).isEqualTo(attempt);
                        if (k == failForGood || (k % 3 == 0 && attempt < 1 + (k % 2) + 1)) {
                            throw new IllegalStateException("attempt " + attempt + " of t" + k);
                        }
                        return (prev == null ? 0 : ctx.input(prev)) + 1;
                    }));
                }
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, MAX);
                assertEndedWell(run);
                for (int i = 0; i < n; i++) {
                    if (failForGood >= 0 && i > failForGood) {
                        assertThat(run.state(tasks.get(i))).isEqualTo(TaskState.CANCELLED);
                        assertThat(runs.get(i)).as("t%d never ran", i).isZero();
                    } else if (i == failForGood) {
                        assertThat(run.state(tasks.get(i))).isEqualTo(TaskState.FAILED);
                        assertThat(runs.get(i)).isEqualTo(3);
                    } else {
                        assertThat(run.result(tasks.get(i))).isEqualTo(i + 1);
                        int expected = i % 3 == 0 ? 1 + (i % 2) + 1 : 1;
                        assertThat(runs.get(i)).as("attempts of t%d", i).isEqualTo(expected);
                    }
                }
                assertThat(ex == null).isEqualTo(failForGood < 0);
            }
        }
    }

    /**
     * Chains with timed tasks whose bodies honour the interrupt or ignore it (at most one per run,
     * released after the run ended): the timed-out task FAILS with a TimeoutException, its chain is
     * cancelled, the other chains finish; the ignoring body is abandoned, the run ends anyway.
     */
    @Test
    void timeLimitsOnContinuationsEndTheRunWhetherBodiesHonourInterruptsOrNot() throws Exception {
        try (Scheduler s = scheduler(2)) {
            for (int round = 0; round < 6; round++) {
                boolean ignore = round % 2 == 1;
                AtomicBoolean releaseIgnorer = new AtomicBoolean();
                TaskGraph g = TaskGraph.named("timed-" + round);
                Task<Integer> root = g.task("root").cpu(ctx -> 0);
                int chains = 3;
                int len = 50;
                int stuckChain = round % chains;
                int stuckAt = 10 + round;
                AtomicIntegerArray runs = new AtomicIntegerArray(chains * len);
                List<List<Task<Integer>>> all = new ArrayList<>();
                for (int c = 0; c < chains; c++) {
                    List<Task<Integer>> chain = new ArrayList<>();
                    Task<Integer> prev = root;
                    for (int i = 0; i < len; i++) {
                        Task<Integer> before = prev;
                        int id = c * len + i;
                        boolean stuck = c == stuckChain && i == stuckAt;
                        var b = g.task("c" + c + "-" + i).after(before);
                        b.timeout(stuck ? Duration.ofMillis(50) : Duration.ofSeconds(60));
                        prev = b.cpu(ctx -> {
                            runs.incrementAndGet(id);
                            if (stuck) {
                                if (ignore) {
                                    while (!releaseIgnorer.get()) {
                                        Thread.onSpinWait();
                                    }
                                } else {
                                    new CountDownLatch(1).await(60, TimeUnit.SECONDS);
                                }
                            }
                            return ctx.input(before) + 1;
                        });
                        chain.add(prev);
                    }
                    all.add(chain);
                }
                // CONTINUE: the other chains finish however slowly this machine runs them after the time-out
                GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
                GraphRunException ex;
                try {
                    ex = Checks.awaitEnd(run, MAX);
                } finally {
                    releaseIgnorer.set(true);
                }
                assertThat(ex).isNotNull();
                assertEndedWell(run);
                for (int c = 0; c < chains; c++) {
                    for (int i = 0; i < len; i++) {
                        Task<Integer> t = all.get(c).get(i);
                        assertThat(runs.get(c * len + i))
                                .as("%s ran at most once", t)
                                .isLessThanOrEqualTo(1);
                        if (c != stuckChain || i < stuckAt) {
                            assertThat(run.result(t)).isEqualTo(i + 1);
                        } else if (i == stuckAt) {
                            assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
                            assertThat(run.error(t).orElseThrow()).isInstanceOf(TimeoutException.class);
                        } else {
                            assertThat(run.state(t)).isEqualTo(TaskState.CANCELLED);
                            assertThat(runs.get(c * len + i)).isZero();
                        }
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ cancels

    /**
     * Trees of chains; cancels of a task, a group, or the run, from outside at random moments and
     * from inside bodies (of another task, of the task itself, of the run); FAIL_FAST or CONTINUE
     * with some failing bodies. Every run ends consistently, no body runs twice, results are right.
     */
    @Test
    void cancelsAndFailuresAtRandomMomentsFromOutsideAndInsideBodies() throws Exception {
        ExecutorService cancellers = Executors.newSingleThreadExecutor();
        SplittableRandom random = new SplittableRandom(7);
        try (Scheduler s = scheduler(2)) {
            for (int round = 0; round < 150; round++) {
                int n = 400;
                AtomicIntegerArray runs = new AtomicIntegerArray(n);
                AtomicReference<GraphRun> self = new AtomicReference<>();
                TaskGraph g = TaskGraph.named("cancel-" + round);
                List<Task<Integer>> tasks = new ArrayList<>();
                int insideAt = random.nextInt(n);
                int insideKind = random.nextInt(4); // 0 none, 1 cancel another, 2 cancel itself, 3 cancel the run
                int insideTarget = random.nextInt(n);
                int failAt = random.nextInt(3) == 0 ? random.nextInt(n) : -1;
                boolean failFast = random.nextBoolean();
                boolean tree = random.nextBoolean();
                for (int i = 0; i < n; i++) {
                    int k = i;
                    Task<Integer> parent = i == 0 ? null : tasks.get(tree ? (i - 1) / 2 : i - 1);
                    var b = g.task("t" + i);
                    if (parent != null) {
                        b.after(parent);
                    }
                    tasks.add(b.cpu(ctx -> {
                        runs.incrementAndGet(k);
                        if (k == insideAt && insideKind != 0) {
                            GraphRun r = self.get();
                            if (r != null) {
                                if (insideKind == 1) {
                                    r.cancel(tasks.get(insideTarget));
                                } else if (insideKind == 2) {
                                    r.cancel(tasks.get(k));
                                } else {
                                    r.cancel();
                                }
                            }
                        }
                        if (k == failAt) {
                            throw new IllegalStateException("t" + k + " fails");
                        }
                        return (parent == null ? 0 : ctx.input(parent)) + 1;
                    }));
                }
                TaskGroup<Integer> group = g.group(
                        "grp", 3, (j, gb) -> gb.after(tasks.get(j * 7 % n)).cpu(ctx -> -1));
                GraphRun run =
                        s.submit(g, RunOptions.failureMode(failFast ? FailureMode.FAIL_FAST : FailureMode.CONTINUE));
                self.set(run);
                int spins = random.nextInt(30_000);
                int what = random.nextInt(4);
                Task<Integer> target = tasks.get(random.nextInt(n));
                Future<?> cancel = cancellers.submit(() -> {
                    for (int k = 0; k < spins; k++) {
                        Thread.onSpinWait();
                    }
                    switch (what) {
                        case 0 -> run.cancel();
                        case 1 -> run.cancel(target);
                        case 2 -> run.cancel(group);
                        default -> {}
                    }
                });
                Checks.awaitEnd(run, MAX);
                cancel.get(10, TimeUnit.SECONDS);
                assertEndedWell(run);
                for (int i = 0; i < n; i++) {
                    assertThat(runs.get(i))
                            .as("t%d ran at most once, round %d", i, round)
                            .isLessThanOrEqualTo(1);
                    TaskState st = run.state(tasks.get(i));
                    if (st == TaskState.SUCCEEDED) {
                        int depth = tree ? 31 - Integer.numberOfLeadingZeros(i + 1) : i;
                        assertThat(run.result(tasks.get(i))).isEqualTo(depth + 1);
                    } else if (st == TaskState.CANCELLED) {
                        assertThat(run.error(tasks.get(i)).orElseThrow()).isInstanceOf(TaskCancelledException.class);
                    } else {
                        assertThat(i)
                                .as("only the failing task fails, round %d", round)
                                .isEqualTo(failAt);
                    }
                    if (runs.get(i) == 0) {
                        assertThat(st).as("t%d never ran, round %d", i, round).isIn(TaskState.CANCELLED);
                    }
                }
                if (failAt < 0 && what == 3 && insideKind == 0) {
                    assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
                }
                boolean cancelAsked = what != 3 || insideKind != 0;
                if (failAt >= 0 && runs.get(failAt) == 1) {
                    // The failing body ran: its task failed, unless a cancel reached it while it
                    // ran (a cancel wins the running task's end and its throw is discarded).
                    TaskState failing = run.state(tasks.get(failAt));
                    if (!cancelAsked) {
                        assertThat(failing)
                                .as("t%d threw, nothing cancelled, round %d", failAt, round)
                                .isEqualTo(TaskState.FAILED);
                    }
                    assertThat(failing).isIn(TaskState.FAILED, TaskState.CANCELLED);
                    assertThat(run.status())
                            .as("run with t%d %s, round %d", failAt, failing, round)
                            .isEqualTo(failing == TaskState.FAILED ? RunStatus.FAILED : RunStatus.CANCELLED);
                }
            }
        } finally {
            cancellers.shutdownNow();
        }
    }

    /**
     * whenDone stages registered before the chain starts run on the worker as each task ends; one
     * cancels the next task. The next task, whose continuation the worker is about to make, never
     * runs; everything before succeeded, everything after is cancelled, every future completes.
     */
    @Test
    void aWhenDoneStageThatCancelsTheSuccessorStopsTheChainRightThere() throws Exception {
        try (Scheduler s = scheduler(2)) {
            for (int round = 0; round < 30; round++) {
                int n = 200;
                int stopAfter = 5 + round * 6;
                CountDownLatch go = new CountDownLatch(1);
                AtomicIntegerArray runs = new AtomicIntegerArray(n);
                TaskGraph g = TaskGraph.named("whendone-" + round);
                List<Task<Integer>> tasks = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int k = i;
                    Task<Integer> prev = i == 0 ? null : tasks.get(i - 1);
                    var b = g.task("t" + i);
                    if (prev != null) {
                        b.after(prev);
                    }
                    tasks.add(b.cpu(ctx -> {
                        runs.incrementAndGet(k);
                        if (k == 0) {
                            go.await(30, TimeUnit.SECONDS);
                        }
                        return (prev == null ? 0 : ctx.input(prev)) + 1;
                    }));
                }
                GraphRun run = s.submit(g);
                List<CompletableFuture<Integer>> futures = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    futures.add(run.whenDone(tasks.get(i)));
                }
                Task<Integer> next = tasks.get(stopAfter + 1);
                futures.get(stopAfter).thenRun(() -> run.cancel(next));
                go.countDown();
                Checks.awaitEnd(run, MAX);
                assertEndedWell(run);
                for (int i = 0; i < n; i++) {
                    CompletableFuture<Integer> f = futures.get(i);
                    assertThat(f).as("whenDone of t%d", i).isDone();
                    if (i <= stopAfter) {
                        assertThat(f.join()).isEqualTo(i + 1);
                        assertThat(runs.get(i)).isEqualTo(1);
                    } else {
                        assertThat(f).isCompletedExceptionally();
                        assertThat(run.state(tasks.get(i))).isEqualTo(TaskState.CANCELLED);
                        assertThat(runs.get(i))
                                .as("t%d never ran, round %d", i, round)
                                .isZero();
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ nested runs, resources, policies, listeners

    /** Every fifth task of a chain runs a nested chain and waits for it (one and two workers): results right. */
    @Test
    void nestedRunsInsideContinuationsPassResultsAndCancelsReachThem() throws Exception {
        for (int threads = 1; threads <= 2; threads++) {
            try (Scheduler s = scheduler(threads)) {
                TaskGraph inner = TaskGraph.named("inner");
                List<Task<Integer>> innerTasks = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    Task<Integer> prev = i == 0 ? null : innerTasks.get(i - 1);
                    var b = inner.task("i" + i);
                    if (prev != null) {
                        b.after(prev);
                    }
                    innerTasks.add(b.cpu(ctx -> (prev == null ? 0 : ctx.input(prev)) + 1));
                }
                Task<Integer> innerLast = innerTasks.get(19);
                for (int round = 0; round < 10; round++) {
                    TaskGraph g = TaskGraph.named("outer-" + round);
                    List<Task<Integer>> tasks = new ArrayList<>();
                    for (int i = 0; i < 100; i++) {
                        int k = i;
                        Task<Integer> prev = i == 0 ? null : tasks.get(i - 1);
                        var b = g.task("o" + i);
                        if (prev != null) {
                            b.after(prev);
                        }
                        tasks.add(b.cpu(ctx -> {
                            int base = prev == null ? 0 : ctx.input(prev);
                            if (k % 5 == 4) {
                                return base + ctx.execute(inner).result(innerLast);
                            }
                            return base + 1;
                        }));
                    }
                    GraphRun run = s.execute(g);
                    int expected = 0;
                    for (int i = 0; i < 100; i++) {
                        expected += i % 5 == 4 ? 20 : 1;
                        assertThat(run.result(tasks.get(i))).isEqualTo(expected);
                    }
                }
                // a run cancelled while a continuation waits for its nested run: both end
                CountDownLatch innerEntered = new CountDownLatch(1);
                TaskGraph blocking = TaskGraph.named("blocking-inner");
                blocking.task("b").cpu(ctx -> {
                    innerEntered.countDown();
                    new CountDownLatch(1).await(60, TimeUnit.SECONDS);
                    return 0;
                });
                TaskGraph g = TaskGraph.named("outer-cancelled");
                Task<Integer> a = g.task("a").cpu(ctx -> 1);
                Task<Integer> waits = g.task("waits").after(a).cpu(ctx -> {
                    ctx.execute(blocking);
                    return 1;
                });
                Task<Integer> after = g.task("after").after(waits).cpu(ctx -> 2);
                GraphRun run = s.submit(g);
                assertThat(innerEntered.await(10, TimeUnit.SECONDS)).isTrue();
                run.cancel();
                assertThat(Checks.awaitEnd(run, MAX)).isNotNull();
                assertEndedWell(run);
                assertThat(run.state(waits)).isIn(TaskState.CANCELLED, TaskState.FAILED);
                assertThat(run.state(after)).isEqualTo(TaskState.CANCELLED);
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> s.activeRuns().isEmpty());
            }
        }
    }

    /** Chains mixing plain tasks with resource-holding, urgent and barrier tasks, under SHORTEST_FIRST and the default order. */
    @Test
    void resourcesUrgentTasksBarriersAndShortestFirstAlongChains() throws Exception {
        for (int variant = 0; variant < 2; variant++) {
            var builder = Scheduler.builder()
                    .threads(2)
                    .listener(new NotableEventsOnly())
                    .resource("io", 1);
            if (variant == 1) {
                builder.policy(new ShortestJobFirstPolicy());
            }
            try (Scheduler s = builder.build()) {
                AtomicInteger inIo = new AtomicInteger();
                AtomicInteger ioOverlap = new AtomicInteger();
                for (int round = 0; round < 10; round++) {
                    TaskGraph g = TaskGraph.named("mixed-" + variant + "-" + round);
                    List<List<Task<Integer>>> chains = new ArrayList<>();
                    Task<Integer> root = g.task("root").cpu(ctx -> 0);
                    for (int c = 0; c < 3; c++) {
                        List<Task<Integer>> chain = new ArrayList<>();
                        Task<Integer> prev = root;
                        for (int i = 0; i < 200; i++) {
                            Task<Integer> before = prev;
                            var b = g.task("c" + c + "-" + i);
                            if (i % 10 == 3) {
                                TaskBarrier bar = g.barrier("bar" + c + "-" + i).after(before);
                                b.after(bar, before);
                            } else {
                                b.after(before);
                            }
                            if (i % 7 == 2) {
                                b.resource("io", 1);
                            }
                            if (i % 11 == 5) {
                                b.priority(5);
                            }
                            if (i % 13 == 0) {
                                b.cost(Duration.ofNanos(1000 + i));
                            }
                            boolean io = i % 7 == 2;
                            prev = b.cpu(ctx -> {
                                if (io && inIo.incrementAndGet() > 1) {
                                    ioOverlap.incrementAndGet();
                                }
                                try {
                                    return ctx.input(before) + 1;
                                } finally {
                                    if (io) {
                                        inIo.decrementAndGet();
                                    }
                                }
                            });
                            chain.add(prev);
                        }
                        chains.add(chain);
                    }
                    GraphRun run = s.execute(g);
                    for (List<Task<Integer>> chain : chains) {
                        for (int i = 0; i < chain.size(); i++) {
                            assertThat(run.result(chain.get(i))).isEqualTo(i + 1);
                        }
                    }
                    assertEndedWell(run);
                }
                assertThat(ioOverlap)
                        .as("resource io (capacity 1) never held twice")
                        .hasValue(0);
                assertThat(s.resources().available("io")).isEqualTo(1);
            }
        }
    }

    /**
     * A listener for routine events subscribed mid-chain (from a body): every task gets at most one
     * TASK_STARTED and, when started, exactly one TASK_SUCCEEDED; no event for a task ever says
     * READY after its STARTED; results right.
     */
    @Test
    void aRoutineListenerSubscribedMidRunSeesConsistentEvents() throws Exception {
        for (int round = 0; round < 10; round++) {
            try (Scheduler s = scheduler(2)) {
                int n = 2_000;
                Map<String, List<EventType>> byTask = new java.util.concurrent.ConcurrentHashMap<>();
                TaskListener all = e -> {
                    if (e.taskName() != null) {
                        byTask.computeIfAbsent(
                                        e.taskName(), k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                                .add(e.type());
                    }
                };
                TaskGraph g = TaskGraph.named("late-listener");
                List<Task<Integer>> tasks = new ArrayList<>();
                int subscribeAt = 100 + round * 150;
                for (int i = 0; i < n; i++) {
                    int k = i;
                    Task<Integer> prev = i == 0 ? null : tasks.get(i - 1);
                    var b = g.task("t" + i);
                    if (prev != null) {
                        b.after(prev);
                    }
                    tasks.add(b.cpu(ctx -> {
                        if (k == subscribeAt) {
                            s.addListener(all);
                        }
                        return (prev == null ? 0 : ctx.input(prev)) + 1;
                    }));
                }
                GraphRun run = s.execute(g);
                assertThat(run.result(tasks.get(n - 1))).isEqualTo(n);
                for (int i = subscribeAt + 2; i < n; i++) {
                    List<EventType> ev = byTask.get("t" + i);
                    assertThat(ev)
                            .as("events of t%d", i)
                            .containsExactly(EventType.TASK_READY, EventType.TASK_STARTED, EventType.TASK_SUCCEEDED);
                }
                for (Map.Entry<String, List<EventType>> e : byTask.entrySet()) {
                    List<EventType> ev = e.getValue();
                    assertThat(ev.stream()
                                    .filter(t -> t == EventType.TASK_STARTED)
                                    .count())
                            .as(e.getKey())
                            .isLessThanOrEqualTo(1);
                    assertThat(ev.stream()
                                    .filter(t -> t == EventType.TASK_SUCCEEDED)
                                    .count())
                            .as(e.getKey())
                            .isEqualTo(1);
                }
            }
        }
    }

    // ------------------------------------------------------------------ shutdown

    /** close(), shutdownNow() from outside, or close() from inside a continuation, while chains run: every run ends, consistent. */
    @Test
    void shutdownAndCloseWhileChainsRunEndEveryRun() throws Exception {
        ExecutorService outside = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 12; round++) {
                int kind = round % 3;
                Scheduler s = scheduler(2);
                List<GraphRun> runs = new ArrayList<>();
                List<List<Task<Integer>>> all = new ArrayList<>();
                CountDownLatch midway = new CountDownLatch(1);
                CountDownLatch submitted = new CountDownLatch(1);
                for (int r = 0; r < 4; r++) {
                    TaskGraph g = TaskGraph.named("closing-" + round + "-" + r);
                    List<Task<Integer>> tasks = new ArrayList<>();
                    for (int i = 0; i < 3_000; i++) {
                        int k = i;
                        Task<Integer> prev = i == 0 ? null : tasks.get(i - 1);
                        var b = g.task("t" + i);
                        if (prev != null) {
                            b.after(prev);
                        }
                        tasks.add(b.cpu(ctx -> {
                            if (k == 1_000) {
                                submitted.await(30, TimeUnit.SECONDS);
                                midway.countDown();
                                if (kind == 2) {
                                    s.close(); // on a worker: returns at once
                                }
                            }
                            return (prev == null ? 0 : ctx.input(prev)) + 1;
                        }));
                    }
                    all.add(tasks);
                    runs.add(s.submit(g));
                }
                submitted.countDown();
                assertThat(midway.await(30, TimeUnit.SECONDS)).isTrue();
                Future<?> closing = outside.submit(() -> {
                    if (kind == 0) {
                        s.close();
                    } else if (kind == 1) {
                        s.shutdownNow();
                    }
                });
                closing.get(30, TimeUnit.SECONDS);
                for (int r = 0; r < runs.size(); r++) {
                    GraphRun run = runs.get(r);
                    Checks.awaitEnd(run, MAX);
                    assertEndedWell(run);
                    List<Task<Integer>> tasks = all.get(r);
                    for (int i = 0; i < tasks.size(); i++) {
                        if (run.state(tasks.get(i)) == TaskState.SUCCEEDED) {
                            assertThat(run.result(tasks.get(i))).isEqualTo(i + 1);
                        }
                    }
                    if (kind != 1) {
                        assertThat(run.status()).as("shutdown lets runs finish").isEqualTo(RunStatus.SUCCEEDED);
                    }
                }
                assertThat(s.awaitTermination(Duration.ofSeconds(30))).isTrue();
                assertThatThrownBy(() -> s.submit(TaskGraph.named("late"))).isInstanceOf(RuntimeException.class);
            }
        } finally {
            outside.shutdownNow();
        }
    }
}
