package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.RunResults;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.policy.ReadyOrder;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.ShortestJobFirstPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;
import io.hts.engine.run.Diagnosis;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.SchedulerBuilder;
import io.hts.engine.support.Blocking;
import io.hts.engine.support.Ended;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attacks on root seeding: a graph of more than 64 roots is made ready by seeders that split the
 * range of roots down to leaves of at most eight, which one worker makes ready itself. Every test
 * checks the engine's promises: every task ends in exactly one final state, a root's body runs at
 * most once per attempt, a SUCCEEDED root ran exactly once, the run always ends, the profile agrees
 * with the states. Random choices use fixed seeds.
 *
 * <p>Tests that fail on this engine, each for a defect (see their comments):
 * {@code urgentRootsOfAnotherRunJumpRunningChainsWhateverTheirCount} (urgent roots of a graph of
 * more than 64 roots do not jump the queue: their seeder waits in the shared queue behind other
 * runs' continuations), {@code aBackendWhoseStatusMisbehavesOnceLosesNoRoot} (an Error or a null
 * from a backend's status() escapes the placement of a root: the run never ends; in a seeder's
 * leaf it also strands the leaf's lower roots in CREATED), and
 * {@code whileTheWorkersAreBusyAWaitingRunsRootsAreItsFrontier} (roots not yet seeded are shown
 * CREATED, "waiting for 0 of 0 dependencies", with an empty frontier).
 */
class RootSeedingAttackTests {

    static final Duration MAX = Duration.ofSeconds(20);

    // ================================================================== helpers

    /** A graph of {@code n} roots r0..r(n-1), each counting its body's runs and returning its index. */
    static final class Roots {
        final TaskGraph graph;
        final List<Task<Integer>> roots = new ArrayList<>();
        final AtomicIntegerArray ran;

        Roots(String name, int n) {
            this(name, n, (i, b) -> b);
        }

        Roots(String name, int n, java.util.function.BiFunction<Integer, TaskBuilder, TaskBuilder> settings) {
            graph = TaskGraph.named(name);
            ran = new AtomicIntegerArray(n);
            for (int i = 0; i < n; i++) {
                int index = i;
                roots.add(settings.apply(i, graph.task("r" + i)).cpu(ctx -> {
                    ran.incrementAndGet(index);
                    return index;
                }));
            }
        }

        int size() {
            return roots.size();
        }

        /** A sink after every root, summing their results. */
        Task<Long> sink() {
            return graph.task("sink").after(roots).cpu(ctx -> {
                long s = 0;
                for (Task<Integer> t : roots) {
                    s += ctx.input(t);
                }
                return s;
            });
        }

        long expectedSum() {
            long n = roots.size();
            return n * (n - 1) / 2;
        }
    }

    static Scheduler scheduler(int threads) {
        return Scheduler.builder()
                .threads(threads)
                .threadNamePrefix("seed-atk-")
                .build();
    }

    /** Awaits a run (bounded); on a time-out cancels it and fails with its diagnosis. */
    static GraphRunException awaitEnd(GraphRun run) {
        return awaitEnd(run, MAX);
    }

    static GraphRunException awaitEnd(GraphRun run, Duration max) {
        return Ended.failure(run, max);
    }

    /** Shuts down, cancels what still runs and waits (bounded). */
    static void closeBounded(Scheduler s) throws InterruptedException {
        s.shutdown();
        if (!s.awaitTermination(Duration.ofSeconds(10))) {
            s.shutdownNow();
            assertThat(s.awaitTermination(Duration.ofSeconds(10)))
                    .as("scheduler terminated after shutdownNow")
                    .isTrue();
            throw new AssertionError("scheduler did not terminate after shutdown(); active runs were cancelled");
        }
    }

    /**
     * The promises every ended run keeps: done, nothing pending, every task final, states and profile
     * agree, status agrees with states, roots ran at most {@code maxRuns} times, a SUCCEEDED root ran
     * at least once (exactly once when maxRuns is 1), a root that never ran is not SUCCEEDED.
     */
    static void assertRootsConsistent(GraphRun run, Roots r, int maxRuns) {
        assertThat(run.isDone()).as("run done: %s", run).isTrue();
        assertThat(run.pendingTasks()).as("pending after the end").isZero();
        Map<String, TaskState> states = run.states();
        assertThat(states).hasSize(run.graph().size());
        boolean anyFailed = false;
        boolean anyCancelled = false;
        for (Map.Entry<String, TaskState> e : states.entrySet()) {
            assertThat(e.getValue().isTerminal())
                    .as("task %s is final (%s)", e.getKey(), e.getValue())
                    .isTrue();
            anyFailed |= e.getValue() == TaskState.FAILED;
            anyCancelled |= e.getValue() == TaskState.CANCELLED;
        }
        if (anyFailed) {
            assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        } else if (anyCancelled) {
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        } else {
            assertThat(run.status()).isIn(RunStatus.SUCCEEDED, RunStatus.CANCELLED);
        }
        for (int i = 0; i < r.size(); i++) {
            Task<Integer> t = r.roots.get(i);
            TaskState s = run.state(t);
            int n = r.ran.get(i);
            assertThat(n).as("runs of root %d (%s)", i, s).isBetween(0, maxRuns);
            if (s == TaskState.SUCCEEDED) {
                if (maxRuns == 1) {
                    assertThat(n).as("a SUCCEEDED root %d ran exactly once", i).isEqualTo(1);
                } else {
                    assertThat(n).as("a SUCCEEDED root %d ran", i).isPositive();
                }
                assertThat(run.result(t)).isEqualTo(i);
            } else {
                assertThat(run.error(t)).as("cause of root %d (%s)", i, s).isPresent();
            }
        }
        RunProfile p = run.profile();
        assertThat(p.status()).as("profile status").isEqualTo(run.status());
        for (Task<?> t : run.graph().tasks()) {
            TaskTiming tt = p.timing(t.index());
            assertThat(tt.state()).as("profile state of %s", t.name()).isEqualTo(run.state(t));
            if (tt.state() == TaskState.SUCCEEDED && p.hasTimings()) {
                assertThat(tt.ran()).as("profile: SUCCEEDED %s ran", t.name()).isTrue();
            }
        }
        for (int i = 0; i < r.size() && p.hasTimings(); i++) {
            if (r.ran.get(i) == 0) {
                assertThat(p.timing(r.roots.get(i).index()).startNanos())
                        .as("profile: root %d never started", i)
                        .isEqualTo(-1L);
            }
        }
    }

    /** Runs {@code action} on {@code executor} after {@code spins} spin-waits. */
    static Future<?> later(ExecutorService executor, int spins, Runnable action) {
        return executor.submit(() -> {
            for (int k = 0; k < spins; k++) {
                Thread.onSpinWait();
            }
            action.run();
        });
    }

    // ================================================================== counts and shapes

    @ParameterizedTest(name = "{0} roots on {1} workers")
    @CsvSource({
        "65, 1", "65, 2", "65, 3", "66, 1", "71, 2", "72, 1", "72, 3", "73, 2", "79, 1", "80, 2", "81, 3", "127, 2",
        "128, 1", "129, 3", "136, 2", "137, 1", "200, 2", "513, 3", "1025, 2"
    })
    void everyRootRunsOnceAroundTheLeafAndThreshold(int n, int workers) throws Exception {
        Roots r = new Roots("around-" + n, n);
        Task<Long> sink = r.sink();
        try (Scheduler s = scheduler(workers)) {
            for (int round = 1; round <= 4; round++) {
                GraphRun run = round % 2 == 0 ? s.submit(r.graph) : s.execute(r.graph);
                assertThat(awaitEnd(run)).isNull();
                assertThat(run.result(sink)).isEqualTo(r.expectedSum());
                for (int i = 0; i < n; i++) {
                    assertThat(r.ran.get(i))
                            .as("root %d after round %d", i, round)
                            .isEqualTo(round);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} roots")
    @ValueSource(ints = {64, 65, 100, 4_097})
    void onOneWorkerRootsRunInDeclarationOrder(int n) throws Exception {
        List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
        TaskGraph g = TaskGraph.named("order-" + n);
        for (int i = 0; i < n; i++) {
            int index = i;
            g.task("r" + i).cpu(ctx -> order.add(index));
        }
        try (Scheduler s = scheduler(1)) {
            GraphRun run = s.submit(g);
            assertThat(awaitEnd(run)).isNull();
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                expected.add(i);
            }
            assertThat(order).containsExactlyElementsOf(expected);
        }
    }

    @Test
    void twoHundredThousandRootsEachWithASuccessorAndOneSink() throws Exception {
        int n = 200_000;
        TaskGraph g = TaskGraph.named("wide");
        AtomicIntegerArray ranRoot = new AtomicIntegerArray(n);
        AtomicIntegerArray ranNext = new AtomicIntegerArray(n);
        List<Task<Integer>> nexts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int index = i;
            Task<Integer> root = g.task("r" + i).cpu(ctx -> {
                ranRoot.incrementAndGet(index);
                return index;
            });
            nexts.add(g.task("n" + i).after(root).cpu(ctx -> {
                ranNext.incrementAndGet(index);
                return ctx.input(root) + 1;
            }));
        }
        Task<Long> sink = g.task("sink").after(nexts).cpu(ctx -> {
            long sum = 0;
            for (Task<Integer> t : nexts) {
                sum += ctx.input(t);
            }
            return sum;
        });
        try (Scheduler s = scheduler(2)) {
            GraphRun run = s.submit(g);
            assertThat(awaitEnd(run, Duration.ofSeconds(25))).isNull();
            assertThat(run.result(sink)).isEqualTo((long) n * (n - 1) / 2 + n);
            for (int i = 0; i < n; i++) {
                if (ranRoot.get(i) != 1 || ranNext.get(i) != 1) {
                    throw new AssertionError(
                            "task pair " + i + " ran " + ranRoot.get(i) + "/" + ranNext.get(i) + " times");
                }
            }
            assertThat(run.pendingTasks()).isZero();
        }
    }

    @Test
    void rootsInterleavedWithDependentTasksAndDeclaredAfterTheirSuccessors() throws Exception {
        // Task i depends on task i-1 when i % 3 == 2, and some roots are declared after the tasks
        // that name them: the roots are not a prefix of the graph, and the seeders must find them all.
        int n = 3_001;
        TaskGraph g = TaskGraph.named("interleaved");
        AtomicIntegerArray ran = new AtomicIntegerArray(n + 200);
        List<Task<Integer>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            TaskBuilder b = g.task("t" + i);
            if (i % 3 == 2) {
                b.after(all.get(i - 1));
            }
            if (i % 97 == 5) {
                b.after("late" + i); // a root declared later
            }
            all.add(b.cpu(ctx -> {
                ran.incrementAndGet(index);
                return index;
            }));
        }
        List<Task<Integer>> late = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (i % 97 == 5) {
                int index = n + late.size();
                late.add(g.task("late" + i).cpu(ctx -> {
                    ran.incrementAndGet(index);
                    return 0;
                }));
            }
        }
        try (Scheduler s = scheduler(2)) {
            for (int round = 1; round <= 3; round++) {
                GraphRun run = s.submit(g);
                assertThat(awaitEnd(run)).isNull();
                for (int i = 0; i < n + late.size(); i++) {
                    assertThat(ran.get(i)).as("task %d, round %d", i, round).isEqualTo(round);
                }
                assertThat(run.states().values()).containsOnly(TaskState.SUCCEEDED);
            }
        }
    }

    @Test
    void aGroupOfManyMembersAsRootsFeedsAReaderOfTheWholeGroup() throws Exception {
        int n = 30_000;
        AtomicIntegerArray ran = new AtomicIntegerArray(n);
        TaskGraph g = TaskGraph.named("group-roots");
        TaskGroup<Integer> grp = g.group(
                "m",
                n,
                (i, t) -> t.cpu(ctx -> {
                    ran.incrementAndGet(ctx.groupIndex());
                    return ctx.groupIndex();
                }));
        Task<Long> sum = g.task("sum").after(grp).cpu(ctx -> {
            long x = 0;
            for (int v : ctx.inputs(grp)) {
                x += v;
            }
            return x;
        });
        try (Scheduler s = scheduler(2)) {
            GraphRun run = s.submit(g);
            List<Integer> viaFuture = run.whenDone(grp).get(20, TimeUnit.SECONDS);
            assertThat(awaitEnd(run)).isNull();
            assertThat(run.result(sum)).isEqualTo((long) n * (n - 1) / 2);
            assertThat(viaFuture).hasSize(n);
            for (int i = 0; i < n; i++) {
                assertThat(viaFuture.get(i)).isEqualTo(i);
                assertThat(ran.get(i)).as("member %d", i).isEqualTo(1);
            }
        }
    }

    // ================================================================== cancels during the seeding

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 3})
    void randomCancelsOfRunTaskOrGroupDuringSeedingWithSuccessorsAndSink(int workers) throws Exception {
        int n = 6_000;
        SplittableRandom random = new SplittableRandom(1234 + workers);
        ExecutorService cancellers = Executors.newSingleThreadExecutor();
        try (Scheduler s = scheduler(workers)) {
            for (int round = 0; round < 40; round++) {
                TaskGraph g = TaskGraph.named("cancel-" + round);
                AtomicIntegerArray ran = new AtomicIntegerArray(2 * n);
                List<Task<Integer>> roots = new ArrayList<>();
                List<Task<Integer>> nexts = new ArrayList<>();
                TaskGroup<Integer> grp = g.group(
                        "grp",
                        n / 2,
                        (i, t) -> t.cpu(ctx -> {
                            ran.incrementAndGet(ctx.groupIndex());
                            return ctx.groupIndex();
                        }));
                roots.addAll(grp.members());
                for (int i = n / 2; i < n; i++) {
                    int index = i;
                    roots.add(g.task("r" + i).cpu(ctx -> {
                        ran.incrementAndGet(index);
                        return index;
                    }));
                }
                for (int i = 0; i < n; i += 7) {
                    int index = i;
                    Task<Integer> root = roots.get(i);
                    nexts.add(g.task("n" + i).after(root).cpu(ctx -> {
                        ran.incrementAndGet(n + index);
                        return ctx.input(root);
                    }));
                }
                Task<Integer> sink = g.task("sink").after(roots).after(nexts).cpu(ctx -> 1);
                GraphRun run = s.submit(g);
                int kind = random.nextInt(3);
                Task<Integer> target = roots.get(random.nextInt(n));
                Future<?> c = later(cancellers, random.nextInt(300_000), () -> {
                    switch (kind) {
                        case 0 -> run.cancel();
                        case 1 -> run.cancel(target);
                        default -> run.cancel(grp);
                    }
                });
                GraphRunException ex = awaitEnd(run);
                c.get(10, TimeUnit.SECONDS);
                if (ex != null) {
                    assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED);
                }
                Map<String, TaskState> states = run.states();
                for (Map.Entry<String, TaskState> e : states.entrySet()) {
                    assertThat(e.getValue())
                            .as("%s, round %d", e.getKey(), round)
                            .isIn(TaskState.SUCCEEDED, TaskState.CANCELLED);
                }
                for (int i = 0; i < n; i++) {
                    TaskState st = run.state(roots.get(i));
                    assertThat(ran.get(i))
                            .as("root %d ran at most once, round %d", i, round)
                            .isLessThanOrEqualTo(1);
                    if (st == TaskState.SUCCEEDED) {
                        assertThat(ran.get(i))
                                .as("SUCCEEDED root %d ran, round %d", i, round)
                                .isEqualTo(1);
                        assertThat(run.result(roots.get(i))).isEqualTo(i);
                    }
                }
                for (int k = 0; k < nexts.size(); k++) {
                    int i = k * 7;
                    TaskState st = run.state(nexts.get(k));
                    assertThat(ran.get(n + i)).isLessThanOrEqualTo(1);
                    if (st == TaskState.SUCCEEDED) {
                        assertThat(run.state(roots.get(i))).isEqualTo(TaskState.SUCCEEDED);
                        assertThat(ran.get(n + i)).isEqualTo(1);
                    }
                    if (run.state(roots.get(i)) == TaskState.CANCELLED) {
                        assertThat(st)
                                .as("successor of a cancelled root, round %d", round)
                                .isEqualTo(TaskState.CANCELLED);
                    }
                }
                if (kind == 1) {
                    if (run.state(target) == TaskState.CANCELLED) {
                        assertThat(run.state(sink)).isEqualTo(TaskState.CANCELLED);
                        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
                        long cancelledRoots = roots.stream()
                                .filter(t -> run.state(t) == TaskState.CANCELLED)
                                .count();
                        assertThat(cancelledRoots)
                                .as("cancelling one root cancels no other root, round %d", round)
                                .isEqualTo(1);
                    } else {
                        assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
                    }
                }
                if (kind == 2) {
                    for (int i = n / 2; i < n; i++) {
                        assertThat(run.state(roots.get(i)))
                                .as("a root outside the cancelled group, round %d", round)
                                .isEqualTo(TaskState.SUCCEEDED);
                    }
                }
                RunProfile p = run.profile();
                assertThat(p.status()).isEqualTo(run.status());
                for (int i = 0; i < n; i++) {
                    assertThat(p.timing(roots.get(i).index()).state()).isEqualTo(run.state(roots.get(i)));
                    if (ran.get(i) == 0) {
                        assertThat(p.timing(roots.get(i).index()).startNanos()).isEqualTo(-1L);
                    }
                }
                assertThat(run.pendingTasks()).isZero();
            }
        } finally {
            cancellers.shutdownNow();
        }
    }

    @Test
    void theFirstRootToRunCancelsTheRunFromItsBody() throws Exception {
        int n = 50_000;
        try (Scheduler s = scheduler(2)) {
            for (int round = 0; round < 5; round++) {
                AtomicReference<GraphRun> self = new AtomicReference<>();
                CountDownLatch published = new CountDownLatch(1);
                AtomicBoolean first = new AtomicBoolean(true);
                Roots r = new Roots("self-cancel", n);
                // a body that, when first to run, cancels the run it belongs to
                Task<Integer> canceller = r.graph.task("canceller").cpu(ctx -> {
                    if (first.compareAndSet(true, false) && published.await(5, TimeUnit.SECONDS)) {
                        self.get().cancel();
                    }
                    return -1;
                });
                r.sink();
                GraphRun run = s.submit(r.graph);
                self.set(run);
                published.countDown();
                GraphRunException ex = awaitEnd(run);
                assertThat(ex).isNotNull();
                assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED);
                assertRootsConsistent(run, r, 1);
                assertThat(run.state(canceller)).isIn(TaskState.SUCCEEDED, TaskState.CANCELLED);
            }
        }
    }

    // ================================================================== failing bodies

    @ParameterizedTest(name = "fail-fast: {0}")
    @ValueSource(booleans = {true, false})
    void failingRootsEndEveryTaskOnce(boolean failFast) throws Exception {
        int n = 20_000;
        SplittableRandom random = new SplittableRandom(99);
        try (Scheduler s = scheduler(2)) {
            for (int round = 0; round < 10; round++) {
                Set<Integer> failing = ConcurrentHashMap.newKeySet();
                if (round == 0) {
                    failing.add(0); // the root the first seeder runs at once
                } else if (round == 1) {
                    failing.add(n - 1); // the last root seeded
                } else {
                    for (int k = 0; k < 1 + random.nextInt(5); k++) {
                        failing.add(random.nextInt(n));
                    }
                }
                TaskGraph g = TaskGraph.named("failing-" + round);
                AtomicIntegerArray ran = new AtomicIntegerArray(n);
                List<Task<Integer>> roots = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int index = i;
                    roots.add(g.task("r" + i).cpu(ctx -> {
                        ran.incrementAndGet(index);
                        if (failing.contains(index)) {
                            throw new IllegalStateException("root " + index + " fails");
                        }
                        return index;
                    }));
                }
                Task<Integer> sink = g.task("sink").after(roots).cpu(ctx -> 0);
                GraphRun run =
                        s.submit(g, RunOptions.failureMode(failFast ? FailureMode.FAIL_FAST : FailureMode.CONTINUE));
                GraphRunException ex = awaitEnd(run);
                assertThat(ex).isNotNull();
                assertThat(ex.status()).isEqualTo(RunStatus.FAILED);
                assertThat(run.state(sink)).isEqualTo(TaskState.CANCELLED);
                int failed = 0;
                for (int i = 0; i < n; i++) {
                    TaskState st = run.state(roots.get(i));
                    assertThat(ran.get(i)).as("root %d", i).isLessThanOrEqualTo(1);
                    switch (st) {
                        case SUCCEEDED -> assertThat(ran.get(i)).isEqualTo(1);
                        case FAILED -> {
                            failed++;
                            assertThat(failing).contains(i);
                            assertThat(ran.get(i)).isEqualTo(1);
                        }
                        case CANCELLED -> {
                            assertThat(failFast)
                                    .as("a root cancelled without fail-fast: %d", i)
                                    .isTrue();
                            assertThat(failing.contains(i) && ran.get(i) == 1)
                                    .as("a failing root that ran is FAILED, not CANCELLED: %d", i)
                                    .isFalse();
                        }
                        default -> throw new AssertionError("root " + i + " ended " + st);
                    }
                }
                assertThat(failed).isPositive();
                assertThat(run.failures()).hasSize(failed);
                if (!failFast) {
                    assertThat(failed).isEqualTo(failing.size());
                }
                RunProfile p = run.profile();
                assertThat(p.status()).isEqualTo(RunStatus.FAILED);
                for (Task<?> t : g.tasks()) {
                    assertThat(p.timing(t.index()).state()).isEqualTo(run.state(t));
                }
            }
        }
    }

    @Test
    void retriedRootsRunOnceMoreEachAndSucceed() throws Exception {
        int n = 3_000;
        try (Scheduler s = scheduler(2)) {
            AtomicIntegerArray attempts = new AtomicIntegerArray(n);
            TaskGraph g = TaskGraph.named("retried");
            List<Task<Integer>> roots = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int index = i;
                TaskBuilder b = g.task("r" + i);
                if (i % 3 == 0) {
                    b.retries(2, Duration.ZERO);
                }
                roots.add(b.cpu(ctx -> {
                    int a = attempts.incrementAndGet(index);
                    assertThat(ctx.attempt()).isEqualTo(a);
                    if (index % 3 == 0 && a == 1) {
                        throw new IllegalStateException("first attempt of " + index);
                    }
                    return index;
                }));
            }
            GraphRun run = s.submit(g);
            assertThat(awaitEnd(run)).isNull();
            RunProfile p = run.profile();
            for (int i = 0; i < n; i++) {
                assertThat(attempts.get(i)).as("attempts of %d", i).isEqualTo(i % 3 == 0 ? 2 : 1);
                assertThat(run.result(roots.get(i))).isEqualTo(i);
                assertThat(p.timing(roots.get(i).index()).attempts())
                        .as("profile attempts of %d", i)
                        .isEqualTo(i % 3 == 0 ? 2 : 1);
            }
        }
    }

    @Test
    void timeLimitedRootsThatHangFailWhileTheOthersSucceed() throws Exception {
        int n = 400;
        CountDownLatch never = new CountDownLatch(1);
        try (Scheduler s = scheduler(2)) {
            TaskGraph g = TaskGraph.named("timed");
            AtomicIntegerArray ran = new AtomicIntegerArray(n);
            List<Task<Integer>> roots = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int index = i;
                roots.add(g.task("r" + i).timeout(Duration.ofMillis(100)).cpu(ctx -> {
                    ran.incrementAndGet(index);
                    if (index % 50 == 7) {
                        never.await(5, TimeUnit.SECONDS); // interrupted by its time-out
                    }
                    return index;
                }));
            }
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            GraphRunException ex = awaitEnd(run);
            assertThat(ex).isNotNull();
            for (int i = 0; i < n; i++) {
                assertThat(ran.get(i)).isEqualTo(1);
                assertThat(run.state(roots.get(i)))
                        .as("root %d", i)
                        .isEqualTo(i % 50 == 7 ? TaskState.FAILED : TaskState.SUCCEEDED);
            }
            assertThat(run.failures()).hasSize(n / 50);
        } finally {
            never.countDown();
        }
    }

    // ================================================================== resources, priorities, policies

    @Test
    void rootsDeclaringResourcesNeverExceedTheCapacityAndGiveEverythingBackAfterCancels() throws Exception {
        int n = 3_000;
        SplittableRandom random = new SplittableRandom(5);
        ExecutorService cancellers = Executors.newSingleThreadExecutor();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .resource("io", 3)
                .resource("lic", 1)
                .build()) {
            for (int round = 0; round < 12; round++) {
                AtomicInteger inIo = new AtomicInteger();
                AtomicInteger maxIo = new AtomicInteger();
                AtomicInteger inLic = new AtomicInteger();
                AtomicBoolean licOverlap = new AtomicBoolean();
                TaskGraph g = TaskGraph.named("res-" + round);
                AtomicIntegerArray ran = new AtomicIntegerArray(n);
                List<Task<Integer>> roots = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int index = i;
                    TaskBuilder b = g.task("r" + i);
                    if (i % 2 == 0) {
                        b.resource("io", 1);
                    }
                    if (i % 5 == 0) {
                        b.resource("lic", 1);
                    }
                    roots.add(b.cpu(ctx -> {
                        ran.incrementAndGet(index);
                        if (index % 2 == 0) {
                            maxIo.accumulateAndGet(inIo.incrementAndGet(), Math::max);
                        }
                        if (index % 5 == 0 && inLic.incrementAndGet() > 1) {
                            licOverlap.set(true);
                        }
                        Thread.onSpinWait();
                        if (index % 5 == 0) {
                            inLic.decrementAndGet();
                        }
                        if (index % 2 == 0) {
                            inIo.decrementAndGet();
                        }
                        return index;
                    }));
                }
                GraphRun run = s.submit(g);
                boolean cancel = round % 2 == 1;
                Future<?> c = cancel ? later(cancellers, random.nextInt(400_000), run::cancel) : null;
                GraphRunException ex = awaitEnd(run);
                if (c != null) {
                    c.get(10, TimeUnit.SECONDS);
                }
                if (!cancel) {
                    assertThat(ex).isNull();
                }
                assertThat(maxIo.get()).as("io in use at once").isLessThanOrEqualTo(3);
                assertThat(licOverlap).as("two licence holders at once").isFalse();
                for (int i = 0; i < n; i++) {
                    TaskState st = run.state(roots.get(i));
                    assertThat(ran.get(i)).isLessThanOrEqualTo(1);
                    if (st == TaskState.SUCCEEDED) {
                        assertThat(ran.get(i)).isEqualTo(1);
                    } else {
                        assertThat(st).isEqualTo(TaskState.CANCELLED);
                    }
                }
                // A body still running when the cancel ended its run gives its units back when it
                // returns, just after the run's end: wait for that (a leak still fails, after 10 s).
                int r = round;
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                    assertThat(s.resources().available("io"))
                            .as("io given back, round %d", r)
                            .isEqualTo(3);
                    assertThat(s.resources().available("lic"))
                            .as("licence given back, round %d", r)
                            .isEqualTo(1);
                    assertThat(s.resources().waiting())
                            .as("nobody waits for resources, round %d", r)
                            .isZero();
                });
            }
        } finally {
            cancellers.shutdownNow();
        }
    }

    @ParameterizedTest(name = "shortest-first: {0}")
    @ValueSource(booleans = {false, true})
    void urgentAndPrioritizedRootsAmongPlainOnesRunOnceEach(boolean shortestFirst) throws Exception {
        int n = 20_000;
        SchedulerBuilder b = Scheduler.builder().threads(2);
        if (shortestFirst) {
            b.policy(new ShortestJobFirstPolicy());
        }
        try (Scheduler s = b.build()) {
            Roots r = new Roots("prio", n, (i, t) -> {
                if (i % 10 == 3) {
                    t.priority(1 + i % 7);
                }
                if (i % 13 == 0) {
                    t.cost(Duration.ofNanos(1 + i % 1000));
                }
                return t;
            });
            Task<Long> sink = r.sink();
            for (int round = 0; round < 2; round++) {
                GraphRun run = s.submit(r.graph);
                assertThat(awaitEnd(run)).isNull();
                assertThat(run.result(sink)).isEqualTo(r.expectedSum());
            }
            for (int i = 0; i < n; i++) {
                assertThat(r.ran.get(i)).as("root %d", i).isEqualTo(2);
            }
        }
    }

    /** A policy whose every call throws what {@code thrown} makes. */
    static SchedulingPolicy throwingPolicy(java.util.function.Supplier<? extends Throwable> thrown) {
        return new SchedulingPolicy() {
            @Override
            public String name() {
                return "throws-always";
            }

            @Override
            public Device selectDevice(TaskInfo task, SystemStatus status) {
                throw sneaky(thrown.get());
            }

            @Override
            public ReadyOrder readyOrder() {
                throw sneaky(thrown.get());
            }
        };
    }

    @SuppressWarnings("unchecked")
    static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
        throw (E) t;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"runtime", "error", "stack-overflow"})
    void aPolicyThatThrowsOnEveryRootDoesNotLoseAny(String what) throws Exception {
        IntFunction<Throwable> make = k -> switch (what) {
            case "runtime" -> new IllegalStateException("policy " + k);
            case "error" -> new AssertionError("policy " + k);
            default -> new StackOverflowError("policy " + k);
        };
        AtomicInteger calls = new AtomicInteger();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(throwingPolicy(() -> make.apply(calls.incrementAndGet())))
                .build()) {
            Roots r = new Roots("policy-throws", 5_000, (i, t) -> i % 4 == 0 ? t.priority(2) : t);
            Task<Long> sink = r.sink();
            GraphRun run = s.submit(r.graph);
            assertThat(awaitEnd(run)).isNull();
            assertThat(run.result(sink)).isEqualTo(r.expectedSum());
            assertRootsConsistent(run, r, 1);
            assertThat(s.policyFailures()).isPositive();
        }
    }

    /** A well-behaved device backend running GPU bodies on its own thread, or inline when asked. */
    static ScriptedBackend backend(boolean inline) {
        ScriptedBackend b = ScriptedBackend.wellBehaved();
        b.inline = inline;
        return b;
    }

    /** A policy choosing from a fixed cycle of answers: GPU, CPU, null, and throwing. */
    static SchedulingPolicy oddPolicy() {
        AtomicInteger k = new AtomicInteger();
        return new SchedulingPolicy() {
            @Override
            public String name() {
                return "odd";
            }

            @Override
            public Device selectDevice(TaskInfo task, SystemStatus status) {
                return switch (k.getAndIncrement() % 4) {
                    case 0 -> Device.GPU;
                    case 1 -> Device.CPU;
                    case 2 -> null;
                    default -> throw new IllegalArgumentException("odd policy throws");
                };
            }
        };
    }

    @ParameterizedTest(name = "inline backend: {0}")
    @ValueSource(booleans = {false, true})
    void dualBodiedRootsPlacedByAnOddPolicyRunOnceOnOneDevice(boolean inline) throws Exception {
        int n = 2_000;
        AtomicIntegerArray cpuRuns = new AtomicIntegerArray(n);
        AtomicIntegerArray gpuRuns = new AtomicIntegerArray(n);
        TaskGraph g = TaskGraph.named("dual");
        List<Task<Integer>> roots = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            roots.add(g.task("r" + i)
                    .bodies(
                            ctx -> {
                                cpuRuns.incrementAndGet(index);
                                return index;
                            },
                            ctx -> {
                                gpuRuns.incrementAndGet(index);
                                return index;
                            }));
        }
        Task<Long> sink = g.task("sink").after(roots).cpu(ctx -> {
            long sum = 0;
            for (Task<Integer> t : roots) {
                sum += ctx.input(t);
            }
            return sum;
        });
        ScriptedBackend be = backend(inline);
        Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(be)
                .policy(oddPolicy())
                .build();
        try {
            GraphRun run = s.submit(g);
            assertThat(awaitEnd(run)).isNull();
            assertThat(run.result(sink)).isEqualTo((long) n * (n - 1) / 2);
            int onGpu = 0;
            for (int i = 0; i < n; i++) {
                assertThat(cpuRuns.get(i) + gpuRuns.get(i))
                        .as("runs of root %d", i)
                        .isEqualTo(1);
                onGpu += gpuRuns.get(i);
            }
            assertThat(onGpu).as("the policy sent some to the GPU").isPositive();
            assertThat(s.policyFailures()).isPositive();
            assertThat(be.reportErrors).isEmpty();
        } finally {
            closeBounded(s);
        }
    }

    @ParameterizedTest(name = "inline: {0}, fail-fast: {1}")
    @CsvSource({"false, true", "true, true", "false, false", "true, false"})
    void gpuOnlyRootsThatFailOnTheDeviceEndEveryTaskOnce(boolean inline, boolean failFast) throws Exception {
        int n = 3_000;
        AtomicIntegerArray ran = new AtomicIntegerArray(n);
        TaskGraph g = TaskGraph.named("gpu-roots");
        List<Task<Integer>> roots = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            roots.add(g.task("r" + i).gpu(ctx -> {
                ran.incrementAndGet(index);
                if (index % 1000 == 500) {
                    throw new IllegalStateException("device root " + index + " fails");
                }
                return index;
            }));
        }
        Task<Integer> sink = g.task("sink").after(roots).cpu(ctx -> 0);
        ScriptedBackend be = backend(inline);
        Scheduler s = Scheduler.builder().threads(2).gpuBackend(be).build();
        try {
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < n; i++) {
                    ran.set(i, 0);
                }
                GraphRun run =
                        s.submit(g, RunOptions.failureMode(failFast ? FailureMode.FAIL_FAST : FailureMode.CONTINUE));
                GraphRunException ex = awaitEnd(run);
                assertThat(ex).isNotNull();
                assertThat(ex.status()).isEqualTo(RunStatus.FAILED);
                assertThat(run.state(sink)).isEqualTo(TaskState.CANCELLED);
                for (int i = 0; i < n; i++) {
                    TaskState st = run.state(roots.get(i));
                    assertThat(ran.get(i)).as("root %d", i).isLessThanOrEqualTo(1);
                    if (st == TaskState.SUCCEEDED) {
                        assertThat(ran.get(i)).isEqualTo(1);
                    } else if (st == TaskState.FAILED) {
                        assertThat(i % 1000).isEqualTo(500);
                    } else {
                        assertThat(failFast)
                                .as("root %d cancelled without fail-fast", i)
                                .isTrue();
                        assertThat(st).isEqualTo(TaskState.CANCELLED);
                    }
                }
                if (!failFast) {
                    assertThat(run.failures()).hasSize(3);
                }
                assertThat(run.pendingTasks()).isZero();
            }
            assertThat(be.reportErrors).isEmpty();
        } finally {
            closeBounded(s);
        }
    }

    // ================================================================== listeners

    @Test
    void aListenerForEveryEventSeesEachRootReadyStartedAndSucceededExactlyOnce() throws Exception {
        int n = 9_000;
        Map<Long, Map<String, int[]>> seen = new ConcurrentHashMap<>();
        TaskListener all = new TaskListener() {
            @Override
            public void onEvent(TaskEvent e) {
                if (e.taskName() == null) {
                    return;
                }
                int[] counts = seen.computeIfAbsent(e.runId(), k -> new ConcurrentHashMap<>())
                        .computeIfAbsent(e.taskName(), k -> new int[EventType.values().length]);
                synchronized (counts) {
                    counts[e.type().ordinal()]++;
                }
            }

            @Override
            public boolean wantsRoutineEvents() {
                return true;
            }
        };
        try (Scheduler s = Scheduler.builder().threads(2).listener(all).build()) {
            Roots r = new Roots("events", n);
            r.sink();
            List<GraphRun> runs = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                runs.add(s.submit(r.graph));
            }
            for (GraphRun run : runs) {
                assertThat(awaitEnd(run)).isNull();
            }
            for (GraphRun run : runs) {
                Map<String, int[]> byTask = seen.get(run.runId());
                assertThat(byTask).as("events of run %d", run.runId()).hasSize(n + 1);
                for (Map.Entry<String, int[]> e : byTask.entrySet()) {
                    int[] c = e.getValue();
                    synchronized (c) {
                        assertThat(c[EventType.TASK_READY.ordinal()])
                                .as("READY of %s", e.getKey())
                                .isEqualTo(1);
                        assertThat(c[EventType.TASK_STARTED.ordinal()])
                                .as("STARTED of %s", e.getKey())
                                .isEqualTo(1);
                        assertThat(c[EventType.TASK_SUCCEEDED.ordinal()])
                                .as("SUCCEEDED of %s", e.getKey())
                                .isEqualTo(1);
                        assertThat(c[EventType.TASK_CANCELLED.ordinal()] + c[EventType.TASK_FAILED.ordinal()])
                                .isZero();
                    }
                }
            }
            for (int i = 0; i < n; i++) {
                assertThat(r.ran.get(i)).isEqualTo(3);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"runtime", "stack-overflow", "interrupt", "interrupt-and-throw"})
    void listenersThatThrowOrInterruptOnEveryReadyDoNotLoseRoots(String what) throws Exception {
        AtomicInteger calls = new AtomicInteger();
        TaskListener bad = e -> {
            calls.incrementAndGet();
            if (e.type() != EventType.TASK_READY && e.type() != EventType.TASK_STARTED) {
                return;
            }
            switch (what) {
                case "runtime" -> throw new IllegalStateException("listener");
                case "stack-overflow" -> throw new StackOverflowError("listener");
                case "interrupt" -> Thread.currentThread().interrupt();
                default -> {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("listener after interrupting");
                }
            }
        };
        AtomicInteger interruptedBodies = new AtomicInteger();
        try (Scheduler s = Scheduler.builder().threads(2).listener(bad).build()) {
            Roots r = new Roots("bad-listener", 7_000);
            TaskGraph g = r.graph;
            // a body that notices a stray interrupt would fail: count them instead
            Task<Integer> probe = g.task("probe").cpu(ctx -> {
                if (Thread.currentThread().isInterrupted()) {
                    interruptedBodies.incrementAndGet();
                }
                return 0;
            });
            Task<Long> sink = r.sink();
            for (int round = 1; round <= 2; round++) {
                GraphRun run = s.submit(g);
                assertThat(awaitEnd(run)).isNull();
                assertThat(run.result(sink)).isEqualTo(r.expectedSum());
                assertThat(run.state(probe)).isEqualTo(TaskState.SUCCEEDED);
            }
            assertThat(interruptedBodies)
                    .as("bodies that saw a listener's interrupt")
                    .hasValue(0);
            assertThat(calls.get()).isPositive();
        }
    }

    @ParameterizedTest(name = "cancel at ready #{0}")
    @ValueSource(ints = {1, 3, 8, 9, 64, 65, 1000, 4999})
    void aListenerThatCancelsTheRunAtTheNthReadyEndsEveryRootOnce(int nth) throws Exception {
        int n = 5_000;
        AtomicReference<GraphRun> current = new AtomicReference<>();
        AtomicInteger readies = new AtomicInteger();
        CountDownLatch published = new CountDownLatch(1);
        TaskListener l = e -> {
            if (e.type() == EventType.TASK_READY && readies.incrementAndGet() == nth) {
                try {
                    if (published.await(5, TimeUnit.SECONDS)) {
                        current.get().cancel();
                    }
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try (Scheduler s = Scheduler.builder().threads(2).listener(l).build()) {
            Roots r = new Roots("listener-cancel", n);
            r.sink();
            GraphRun run = s.submit(r.graph);
            current.set(run);
            published.countDown();
            GraphRunException ex = awaitEnd(run);
            assertThat(ex).isNotNull();
            assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED);
            assertRootsConsistent(run, r, 1);
        }
    }

    @Test
    void aListenerThatCancelsTheNextRootsWhileTheyAreSeededCancelsExactlyThem() throws Exception {
        int n = 4_000;
        AtomicReference<GraphRun> current = new AtomicReference<>();
        CountDownLatch published = new CountDownLatch(1);
        Roots r = new Roots("cancel-next", n);
        Map<String, Task<Integer>> byName = new HashMap<>();
        for (Task<Integer> t : r.roots) {
            byName.put(t.name(), t);
        }
        Set<String> cancelledByListener = ConcurrentHashMap.newKeySet();
        TaskListener l = e -> {
            if (e.type() != EventType.TASK_READY
                    || e.taskName() == null
                    || !e.taskName().startsWith("r")) {
                return;
            }
            int i = Integer.parseInt(e.taskName().substring(1));
            // the READY root i cancels roots i+1 and i+8 (same leaf, and the next leaf), when they exist
            try {
                if (!published.await(5, TimeUnit.SECONDS)) {
                    return;
                }
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
            for (int j : new int[] {i + 1, i + 8}) {
                if (j < n && j % 3 == 0) {
                    if (current.get().cancel(byName.get("r" + j))) {
                        cancelledByListener.add("r" + j);
                    }
                }
            }
        };
        try (Scheduler s = Scheduler.builder().threads(2).listener(l).build()) {
            GraphRun run = s.submit(r.graph);
            current.set(run);
            published.countDown();
            GraphRunException ex = awaitEnd(run);
            assertRootsConsistent(run, r, 1);
            for (int i = 0; i < n; i++) {
                TaskState st = run.state(r.roots.get(i));
                if (cancelledByListener.contains("r" + i)) {
                    assertThat(st)
                            .as("root %d cancelled by the listener", i)
                            .isIn(TaskState.CANCELLED, TaskState.SUCCEEDED);
                } else {
                    assertThat(st).as("root %d not cancelled by anyone", i).isEqualTo(TaskState.SUCCEEDED);
                }
            }
            if (cancelledByListener.stream().anyMatch(name -> run.state(byName.get(name)) == TaskState.CANCELLED)) {
                assertThat(ex).isNotNull();
                assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED);
            }
        }
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2})
    void aListenerThatRunsAManyRootGraphInsideTheSeedersReadyEventsSeesItFinish(int workers) throws Exception {
        AtomicReference<Scheduler> self = new AtomicReference<>();
        CountDownLatch published = new CountDownLatch(1);
        AtomicInteger nestedDone = new AtomicInteger();
        AtomicInteger nestedFailed = new AtomicInteger();
        TaskListener l = e -> {
            if (e.type() != EventType.TASK_READY
                    || !"outer".equals(e.graphName())
                    || e.taskName() == null
                    || !(e.taskName().equals("r3")
                            || e.taskName().equals("r700")
                            || e.taskName().equals("r1999"))) {
                return;
            }
            try {
                if (!published.await(5, TimeUnit.SECONDS)) {
                    return;
                }
                Roots inner = new Roots("inner-from-listener", 300);
                Task<Long> sink = inner.sink();
                GraphRun nested = self.get().execute(inner.graph); // on a worker: it helps while it waits
                if (nested.result(sink) == inner.expectedSum()) {
                    nestedDone.incrementAndGet();
                }
            } catch (Throwable ex) {
                nestedFailed.incrementAndGet();
            }
        };
        try (Scheduler s = Scheduler.builder().threads(workers).listener(l).build()) {
            self.set(s);
            Roots r = new Roots("outer", 2_000);
            Task<Long> sink = r.sink();
            GraphRun run = s.submit(r.graph);
            published.countDown();
            assertThat(awaitEnd(run)).isNull();
            assertThat(run.result(sink)).isEqualTo(r.expectedSum());
            assertRootsConsistent(run, r, 1);
            assertThat(nestedFailed).hasValue(0);
            assertThat(nestedDone).hasValue(3);
        }
    }

    // ================================================================== nested runs, concurrent runs

    @Test
    void nestedExecuteOfManyRootGraphsInsideBodiesOnOneWorker() throws Exception {
        int outer = 70;
        int inner = 300;
        AtomicInteger innerRuns = new AtomicInteger();
        try (Scheduler s = scheduler(1)) {
            TaskGraph g = TaskGraph.named("outer");
            List<Task<Long>> roots = new ArrayList<>();
            for (int i = 0; i < outer; i++) {
                roots.add(g.task("o" + i).cpu(ctx -> {
                    Roots r = new Roots("inner", inner);
                    Task<Long> sink = r.sink();
                    RunResults res = ctx.execute(r.graph);
                    for (int k = 0; k < inner; k++) {
                        if (r.ran.get(k) != 1) {
                            throw new IllegalStateException("inner root " + k + " ran " + r.ran.get(k) + " times");
                        }
                    }
                    innerRuns.incrementAndGet();
                    return res.result(sink);
                }));
            }
            Task<Long> total = g.task("total").after(roots).cpu(ctx -> {
                long sum = 0;
                for (Task<Long> t : roots) {
                    sum += ctx.input(t);
                }
                return sum;
            });
            GraphRun run = s.submit(g);
            assertThat(awaitEnd(run, Duration.ofSeconds(25))).isNull();
            assertThat(run.result(total)).isEqualTo((long) outer * inner * (inner - 1) / 2);
            assertThat(innerRuns).hasValue(outer);
        }
    }

    @Test
    void nestedExecuteThreeLevelsDeepOfManyRootGraphsOnOneWorker() throws Exception {
        AtomicInteger leaves = new AtomicInteger();
        try (Scheduler s = scheduler(1)) {
            TaskGraph g = nestedLevel(3, 66, leaves);
            GraphRun run = s.submit(g);
            assertThat(awaitEnd(run, Duration.ofSeconds(25))).isNull();
            assertThat(leaves).hasValue(66 * 66 * 66);
        }
    }

    static TaskGraph nestedLevel(int depth, int width, AtomicInteger leaves) {
        TaskGraph g = TaskGraph.named("level-" + depth);
        g.group(
                "n",
                width,
                (i, t) -> t.cpu(ctx -> {
                    if (depth == 1) {
                        leaves.incrementAndGet();
                        return 1;
                    }
                    ctx.execute(nestedLevel(depth - 1, width, leaves));
                    return 1;
                }));
        return g;
    }

    @Test
    void aNestedManyRootRunIsCancelledWithItsOuterTaskDuringSeeding() throws Exception {
        SplittableRandom random = new SplittableRandom(77);
        ExecutorService cancellers = Executors.newSingleThreadExecutor();
        try (Scheduler s = scheduler(1)) {
            for (int round = 0; round < 20; round++) {
                AtomicReference<GraphRun> innerRun = new AtomicReference<>();
                Roots inner = new Roots("inner-" + round, 20_000);
                inner.sink();
                CountDownLatch started = new CountDownLatch(1);
                TaskGraph g = TaskGraph.named("outer-" + round);
                Task<Integer> host = g.task("host").cpu(ctx -> {
                    started.countDown();
                    ctx.execute(inner.graph);
                    return 1;
                });
                g.task("after").after(host).cpu(ctx -> 2);
                GraphRun run = s.submit(g);
                assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                Future<?> c = later(
                        cancellers, random.nextInt(200_000), round % 2 == 0 ? run::cancel : () -> run.cancel(host));
                GraphRunException ex = awaitEnd(run);
                c.get(10, TimeUnit.SECONDS);
                if (ex != null) {
                    assertThat(ex.status()).isIn(RunStatus.CANCELLED, RunStatus.FAILED);
                }
                for (int i = 0; i < inner.size(); i++) {
                    assertThat(inner.ran.get(i))
                            .as("inner root %d, round %d", i, round)
                            .isLessThanOrEqualTo(1);
                }
                assertThat(s.activeRuns())
                        .as("the nested run ended with its host, round %d", round)
                        .isEmpty();
            }
        } finally {
            cancellers.shutdownNow();
        }
    }

    @Test
    void concurrentRunsOfOneCompiledGraphFromManyThreadsKeepTheirOwnResults() throws Exception {
        int n = 10_000;
        int submitters = 4;
        int runsEach = 4;
        Roots r = new Roots("shared", n);
        Task<Long> sink = r.sink();
        ExecutorService pool = Executors.newFixedThreadPool(submitters);
        try (Scheduler s = scheduler(2)) {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<List<GraphRun>>> fs = new ArrayList<>();
            for (int k = 0; k < submitters; k++) {
                int kk = k;
                fs.add(pool.submit(() -> {
                    go.await();
                    List<GraphRun> mine = new ArrayList<>();
                    for (int j = 0; j < runsEach; j++) {
                        mine.add((kk + j) % 2 == 0 ? s.submit(r.graph) : s.execute(r.graph));
                    }
                    return mine;
                }));
            }
            go.countDown();
            List<GraphRun> runs = new ArrayList<>();
            for (Future<List<GraphRun>> f : fs) {
                runs.addAll(f.get(25, TimeUnit.SECONDS));
            }
            for (GraphRun run : runs) {
                assertThat(awaitEnd(run)).isNull();
                assertThat(run.result(sink)).isEqualTo(r.expectedSum());
                assertThat(run.states().values()).containsOnly(TaskState.SUCCEEDED);
                assertThat(run.profile().status()).isEqualTo(RunStatus.SUCCEEDED);
            }
            for (int i = 0; i < n; i++) {
                assertThat(r.ran.get(i)).as("root %d", i).isEqualTo(submitters * runsEach);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentRunsOfOneGraphCancelledAtRandomDoNotDisturbEachOther() throws Exception {
        int n = 8_000;
        SplittableRandom random = new SplittableRandom(31);
        ExecutorService cancellers = Executors.newFixedThreadPool(2);
        AtomicIntegerArray[] ranByRun = new AtomicIntegerArray[64];
        Map<Long, Integer> slot = new ConcurrentHashMap<>();
        TaskGraph g = TaskGraph.named("shared-cancel");
        List<Task<Integer>> roots = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            roots.add(g.task("r" + i).cpu(ctx -> {
                Integer idx;
                while ((idx = slot.get(ctx.runId())) == null) {
                    Thread.onSpinWait(); // its submitter records the run's slot right after submit returns
                }
                ranByRun[idx].incrementAndGet(index);
                return index;
            }));
        }
        Task<Integer> sink = g.task("sink").after(roots).cpu(ctx -> 1);
        try (Scheduler s = scheduler(2)) {
            for (int wave = 0; wave < 6; wave++) {
                List<GraphRun> runs = new ArrayList<>();
                List<Boolean> cancelled = new ArrayList<>();
                List<Future<?>> cs = new ArrayList<>();
                for (int k = 0; k < 4; k++) {
                    int idx = wave * 4 + k;
                    ranByRun[idx] = new AtomicIntegerArray(n);
                    GraphRun run = s.submit(g);
                    slot.put(run.runId(), idx);
                    runs.add(run);
                    boolean c = random.nextBoolean();
                    cancelled.add(c);
                    if (c) {
                        cs.add(later(cancellers, random.nextInt(300_000), run::cancel));
                    }
                }
                for (int k = 0; k < 4; k++) {
                    GraphRun run = runs.get(k);
                    GraphRunException ex = awaitEnd(run);
                    AtomicIntegerArray ran = ranByRun[wave * 4 + k];
                    if (!cancelled.get(k)) {
                        assertThat(ex)
                                .as("an uncancelled run next to cancelled ones")
                                .isNull();
                        assertThat(run.state(sink)).isEqualTo(TaskState.SUCCEEDED);
                    }
                    for (int i = 0; i < n; i++) {
                        TaskState st = run.state(roots.get(i));
                        assertThat(ran.get(i)).isLessThanOrEqualTo(1);
                        if (st == TaskState.SUCCEEDED) {
                            assertThat(ran.get(i)).isEqualTo(1);
                        } else {
                            assertThat(st).isEqualTo(TaskState.CANCELLED);
                        }
                    }
                }
                for (Future<?> f : cs) {
                    f.get(10, TimeUnit.SECONDS);
                }
            }
        } finally {
            cancellers.shutdownNow();
        }
    }

    // ================================================================== shutdown and close

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"shutdown", "close-from-other-thread", "shutdownNow"})
    void shutdownOrCloseDuringSeedingLetsTheRunEndAndTheSchedulerTerminate(String how) throws Exception {
        SplittableRandom random = new SplittableRandom(how.hashCode());
        ExecutorService closers = Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 10; round++) {
                Scheduler s = Scheduler.builder()
                        .threads(2)
                        .threadNamePrefix("seed-sd-")
                        .build();
                Roots r = new Roots("sd-" + round, 30_000);
                Task<Long> sink = r.sink();
                GraphRun run = s.submit(r.graph);
                Future<?> c = later(closers, random.nextInt(200_000), () -> {
                    switch (how) {
                        case "shutdown" -> s.shutdown();
                        case "close-from-other-thread" -> s.close();
                        default -> s.shutdownNow();
                    }
                });
                GraphRunException ex = awaitEnd(run);
                c.get(20, TimeUnit.SECONDS);
                if (!how.equals("shutdownNow")) {
                    assertThat(ex).as("a shutdown lets the run finish").isNull();
                    assertThat(run.result(sink)).isEqualTo(r.expectedSum());
                }
                assertRootsConsistent(run, r, 1);
                assertThat(s.awaitTermination(Duration.ofSeconds(10)))
                        .as("terminated, round %d", round)
                        .isTrue();
                assertThat(s.isTerminated()).isTrue();
            }
        } finally {
            closers.shutdownNow();
        }
    }

    @Test
    void aListenerThatClosesTheSchedulerDuringSeedingDoesNotCutTheRunShort() throws Exception {
        AtomicInteger readies = new AtomicInteger();
        AtomicReference<Scheduler> self = new AtomicReference<>();
        CountDownLatch published = new CountDownLatch(1);
        TaskListener closer = e -> {
            if (e.type() == EventType.TASK_READY && readies.incrementAndGet() == 100) {
                try {
                    if (published.await(5, TimeUnit.SECONDS)) {
                        self.get().close(); // on a worker: shuts down, returns at once
                    }
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        Scheduler s = Scheduler.builder().threads(2).listener(closer).build();
        self.set(s);
        Roots r = new Roots("closer", 20_000);
        Task<Long> sink = r.sink();
        GraphRun run = s.submit(r.graph);
        published.countDown();
        try {
            assertThat(awaitEnd(run)).isNull();
            assertThat(run.result(sink)).isEqualTo(r.expectedSum());
            assertRootsConsistent(run, r, 1);
            assertThat(s.awaitTermination(Duration.ofSeconds(10))).isTrue();
        } finally {
            s.shutdownNow();
        }
    }

    @Test
    void aBodyThatSubmitsManyRootRunsAfterShutdownStillGetsThemSeeded() throws Exception {
        // After shutdown(), a body of an active run may still start nested runs on its worker.
        Scheduler s = Scheduler.builder().threads(1).build();
        CountDownLatch shutDown = new CountDownLatch(1);
        AtomicReference<Long> innerSum = new AtomicReference<>();
        TaskGraph g = TaskGraph.named("late-nested");
        g.task("host").cpu(ctx -> {
            if (!shutDown.await(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no shutdown");
            }
            Roots r = new Roots("late-inner", 5_000);
            Task<Long> sink = r.sink();
            innerSum.set(ctx.execute(r.graph).result(sink));
            return 1;
        });
        try {
            GraphRun run = s.submit(g);
            s.shutdown();
            shutDown.countDown();
            assertThat(awaitEnd(run)).isNull();
            assertThat(innerSum.get()).isEqualTo(5_000L * 4_999 / 2);
            assertThat(s.awaitTermination(Duration.ofSeconds(10))).isTrue();
        } finally {
            s.shutdownNow();
        }
    }

    // ================================================================== observation during seeding

    @Test
    void statesDiagnosisAndProfileSnapshotsDuringSeedingAreWellFormed() throws Exception {
        int n = 100_000;
        try (Scheduler s = scheduler(2)) {
            Roots r = new Roots("observed", n);
            Task<Long> sink = r.sink();
            for (int round = 0; round < 3; round++) {
                GraphRun run = s.submit(r.graph);
                int looks = 0;
                while (!run.isDone() && looks < 20) {
                    looks++;
                    Diagnosis d = run.diagnose();
                    int total = d.counts().values().stream()
                            .mapToInt(Integer::intValue)
                            .sum();
                    assertThat(total).isEqualTo(n + 1);
                    Map<String, TaskState> states = run.states();
                    assertThat(states).hasSize(n + 1);
                    RunProfile p = run.profile();
                    assertThat(p.topology().size()).isEqualTo(n + 1);
                    assertThat(run.pendingTasks()).isBetween(0, n + 1);
                }
                assertThat(awaitEnd(run)).isNull();
                assertThat(run.result(sink)).isEqualTo(r.expectedSum());
                Diagnosis end = run.diagnose();
                assertThat(end.waiting()).isEmpty();
                assertThat(end.counts().get(TaskState.SUCCEEDED)).isEqualTo(n + 1);
            }
        }
    }

    /**
     * What a user reads while every worker is busy: a run's roots have no dependencies to wait for,
     * so a diagnosis (the answer to "the program hangs") should show them as the frontier (READY,
     * queued), as it does for 64 roots made ready by the caller, not as CREATED tasks that "wait for
     * 0 of 0 dependencies" with an empty frontier.
     */
    @ParameterizedTest(name = "{0} roots")
    @ValueSource(ints = {64, 65})
    void whileTheWorkersAreBusyAWaitingRunsRootsAreItsFrontier(int n) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(1);
        TaskGraph busy = TaskGraph.named("busy");
        busy.task("block").cpu(ctx -> {
            blocking.countDown();
            return release.await(10, TimeUnit.SECONDS);
        });
        Roots r = new Roots("waiting-" + n, n);
        try (Scheduler s = scheduler(1)) {
            GraphRun first = s.submit(busy);
            assertThat(blocking.await(10, TimeUnit.SECONDS)).isTrue();
            GraphRun run = s.submit(r.graph);
            Diagnosis d;
            Map<String, TaskState> states;
            try {
                d = run.diagnose();
                states = run.states();
            } finally {
                release.countDown();
            }
            assertThat(awaitEnd(first)).isNull();
            assertThat(awaitEnd(run)).isNull();
            assertThat(d.frontier())
                    .as("frontier of a run whose %d roots wait for a worker: %s", n, d)
                    .hasSize(n);
            assertThat(states.values())
                    .as("states of roots that wait for a worker")
                    .containsOnly(TaskState.READY);
        }
    }

    @Test
    void profilesOfManyRootRunsWithRetainedRunsOfOneStayConsistent() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).retainedRuns(1).build()) {
            for (int round = 0; round < 6; round++) {
                Roots r = new Roots("retained-" + round, 1_000 + round * 997);
                r.sink();
                GraphRun run = round % 2 == 0 ? s.execute(r.graph) : s.submit(r.graph);
                assertThat(awaitEnd(run)).isNull();
                assertRootsConsistent(run, r, 1);
                RunProfile p = run.profile();
                long ranCount = p.tasks().stream().filter(TaskTiming::ran).count();
                assertThat(ranCount).isEqualTo(r.size() + 1);
            }
        }
    }

    @Test
    void noProfilingStillRunsEveryRootOnce() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).profiling(false).build()) {
            Roots r = new Roots("no-profile", 50_000);
            Task<Long> sink = r.sink();
            GraphRun run = s.submit(r.graph);
            assertThat(awaitEnd(run)).isNull();
            assertThat(run.result(sink)).isEqualTo(r.expectedSum());
            assertRootsConsistent(run, r, 1);
        }
    }

    @Test
    void bodylessBarrierRootsAmongManyRootsPassTheirSuccessorsOn() throws Exception {
        int n = 500;
        TaskGraph g = TaskGraph.named("barrier-roots");
        AtomicIntegerArray ran = new AtomicIntegerArray(n);
        List<Task<Integer>> after = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            if (i % 2 == 0) {
                io.hts.engine.graph.TaskBarrier b = g.barrier("b" + i);
                after.add(g.task("a" + i).after(b).cpu(ctx -> {
                    ran.incrementAndGet(index);
                    return index;
                }));
            } else {
                after.add(g.task("a" + i).cpu(ctx -> {
                    ran.incrementAndGet(index);
                    return index;
                }));
            }
        }
        try (Scheduler s = scheduler(2)) {
            for (int round = 1; round <= 3; round++) {
                GraphRun run = s.submit(g);
                assertThat(awaitEnd(run)).isNull();
                assertThat(run.states().values()).containsOnly(TaskState.SUCCEEDED);
                for (int i = 0; i < n; i++) {
                    assertThat(ran.get(i)).isEqualTo(round);
                }
            }
        }
    }

    @Test
    void nestedRunsOfManyRootsDeeperThanTheHelpLimitOnOneWorker() throws Exception {
        // 40 levels: each a graph of 70 roots, one of which runs the next level and waits; past 32
        // nested waits a worker blocks and a spare worker seeds and runs the deeper levels.
        AtomicInteger trivial = new AtomicInteger();
        try (Scheduler s = scheduler(1)) {
            GraphRun run = s.submit(chainLevel(40, 70, trivial));
            assertThat(awaitEnd(run, Duration.ofSeconds(25))).isNull();
            assertThat(trivial).hasValue(40 * 69);
        }
    }

    static TaskGraph chainLevel(int depth, int width, AtomicInteger trivial) {
        TaskGraph g = TaskGraph.named("chain-" + depth);
        for (int i = 0; i < width; i++) {
            if (i == width / 2) {
                g.task("deeper")
                        .cpu(ctx -> depth > 1
                                ? ctx.execute(chainLevel(depth - 1, width, trivial))
                                        .status()
                                : null);
            } else {
                g.task("t" + i).cpu(ctx -> trivial.incrementAndGet());
            }
        }
        return g;
    }

    @Test
    void aTimeLimitedHostTimesOutWhileItsNestedManyRootRunIsBeingSeeded() throws Exception {
        try (Scheduler s = scheduler(1)) {
            for (int round = 0; round < 6; round++) {
                Roots inner = new Roots("inner-timed-" + round, 40_000, (i, t) -> t);
                inner.sink();
                TaskGraph g = TaskGraph.named("timed-host-" + round);
                Task<Integer> host = g.task("host")
                        .timeout(Duration.ofMillis(2 + round))
                        .cpu(ctx -> {
                            ctx.execute(inner.graph);
                            return 1;
                        });
                Task<Integer> next = g.task("next").after(host).cpu(ctx -> 2);
                GraphRun run = s.submit(g);
                GraphRunException ex = awaitEnd(run);
                for (int i = 0; i < inner.size(); i++) {
                    assertThat(inner.ran.get(i))
                            .as("inner root %d, round %d", i, round)
                            .isLessThanOrEqualTo(1);
                }
                if (ex != null) {
                    assertThat(run.state(host)).isEqualTo(TaskState.FAILED);
                    assertThat(run.state(next)).isEqualTo(TaskState.CANCELLED);
                }
                assertThat(run.pendingTasks()).isZero();
            }
            // the abandoned hosts' nested runs were cancelled with them: nothing is left running
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!s.activeRuns().isEmpty() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(s.activeRuns()).isEmpty();
        }
    }

    @Test
    void switchingThePolicyDuringSeedingLosesNoRoot() throws Exception {
        SplittableRandom random = new SplittableRandom(3);
        ExecutorService switcher = Executors.newSingleThreadExecutor();
        try (Scheduler s = scheduler(2)) {
            for (int round = 0; round < 10; round++) {
                Roots r = new Roots("switch-" + round, 30_000, (i, t) -> i % 11 == 0 ? t.cost(Duration.ofNanos(i)) : t);
                Task<Long> sink = r.sink();
                s.setPolicy(round % 2 == 0 ? new ShortestJobFirstPolicy() : new io.hts.engine.policy.DefaultPolicy());
                GraphRun run = s.submit(r.graph);
                int k = round;
                Future<?> f = later(
                        switcher,
                        random.nextInt(200_000),
                        () -> s.setPolicy(
                                k % 3 == 0
                                        ? throwingPolicy(() -> new IllegalStateException("switched in"))
                                        : k % 2 == 0
                                                ? new io.hts.engine.policy.DefaultPolicy()
                                                : new ShortestJobFirstPolicy()));
                assertThat(awaitEnd(run)).isNull();
                f.get(10, TimeUnit.SECONDS);
                assertThat(run.result(sink)).isEqualTo(r.expectedSum());
                assertRootsConsistent(run, r, 1);
            }
        } finally {
            switcher.shutdownNow();
        }
    }

    /**
     * Urgent roots (priority > 0) jump the queue: once queued, they are taken before any normal task,
     * a continuation included, and at most one normal task per other worker starts before the last
     * of them (docs/engine.md, "Priority"). Each worker runs a chain of normal tasks of its own run
     * (continuations, one step at a time); run B, submitted while those chains run, has {@code n}
     * urgent roots. B's roots should run within a step or two of the chains, whether B has 64 roots
     * (made ready by the caller, into the priority lane) or more (seeded).
     */
    @ParameterizedTest(name = "{0} urgent roots, {1} workers busy with chains")
    @CsvSource({"64, 1", "65, 1", "1000, 1", "64, 2", "65, 2"})
    void urgentRootsOfAnotherRunJumpRunningChainsWhateverTheirCount(int n, int workers) throws Exception {
        int chain = 3_000;
        AtomicInteger[] steps = new AtomicInteger[workers];
        CountDownLatch chainsStarted = new CountDownLatch(workers);
        CountDownLatch bSubmitted = new CountDownLatch(1);
        List<TaskGraph> chains = new ArrayList<>();
        for (int c = 0; c < workers; c++) {
            AtomicInteger step = new AtomicInteger();
            steps[c] = step;
            TaskGraph a = TaskGraph.named("normal-chain-" + c);
            Task<Integer> prev = a.task("a0").cpu(ctx -> {
                chainsStarted.countDown();
                bSubmitted.await(5, TimeUnit.SECONDS);
                return step.incrementAndGet();
            });
            for (int i = 1; i < chain; i++) {
                prev = a.task("a" + i).after(prev).cpu(ctx -> {
                    Blocking.busyFor(Duration.ofNanos(20_000));
                    return step.incrementAndGet();
                });
            }
            chains.add(a);
        }
        AtomicInteger latestStepSeenByB = new AtomicInteger();
        TaskGraph b = TaskGraph.named("urgent-" + n);
        for (int i = 0; i < n; i++) {
            b.task("u" + i).priority(5).cpu(ctx -> {
                int most = 0;
                for (AtomicInteger st : steps) {
                    most = Math.max(most, st.get());
                }
                return latestStepSeenByB.accumulateAndGet(most, Math::max);
            });
        }
        try (Scheduler s = scheduler(workers)) {
            List<GraphRun> runsA = new ArrayList<>();
            for (TaskGraph a : chains) {
                runsA.add(s.submit(a));
            }
            assertThat(chainsStarted.await(10, TimeUnit.SECONDS)).isTrue();
            GraphRun runB = s.submit(b);
            bSubmitted.countDown();
            assertThat(awaitEnd(runB)).isNull();
            for (GraphRun runA : runsA) {
                assertThat(awaitEnd(runA)).isNull();
            }
            // one worker: exact (nothing else advances the chain); two: the OS may pause a worker for
            // a time slice, so only "long before the chains end" is asserted
            assertThat(latestStepSeenByB.get())
                    .as("steps of a normal chain that ran before the last of %d urgent roots (chains of %d)", n, chain)
                    .isLessThanOrEqualTo(workers == 1 ? 2 : chain / 2);
        }
    }

    // ================================================================== a backend whose status throws an Error

    /**
     * A well-behaved backend whose status() misbehaves exactly once, at its {@code at}-th call:
     * throws an Error (a native binding that failed to load, say) or returns null.
     */
    static ScriptedBackend statusMisbehavingOnce(int at, boolean returnNull) {
        AtomicInteger calls = new AtomicInteger();
        return new ScriptedBackend(2, ScriptedBackend::runAndReport) {
            @Override
            public DeviceStatus status() {
                if (calls.incrementAndGet() == at) {
                    if (returnNull) {
                        return null;
                    }
                    throw new NoClassDefFoundError("native status binding");
                }
                return new DeviceStatus(Device.GPU, DeviceHealth.UP, 4, 0, 0, 0, 1L << 30, "scripted");
            }
        };
    }

    /**
     * A backend's status() that throws an Error (or returns null) once, while dual-bodied roots are
     * placed. The engine guards status() against RuntimeExceptions only: with more than 64 roots the
     * throw escapes from a seeder's leaf loop, leaving the root being placed READY forever and the
     * leaf's lower roots never made ready; the run never ends. (With 64 or fewer, submit() throws
     * and leaves an active run that never ends.)
     */
    @ParameterizedTest(name = "{0} roots, null status: {1}")
    @CsvSource({"64, false", "65, false", "1000, false", "65, true", "1000, true"})
    void aBackendWhoseStatusMisbehavesOnceLosesNoRoot(int n, boolean returnNull) throws Exception {
        AtomicIntegerArray ran = new AtomicIntegerArray(n);
        TaskGraph g = TaskGraph.named("status-once-" + n);
        List<Task<Integer>> roots = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            roots.add(g.task("r" + i)
                    .bodies(
                            ctx -> {
                                ran.incrementAndGet(index);
                                return index;
                            },
                            ctx -> {
                                ran.incrementAndGet(index);
                                return index;
                            }));
        }
        Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(statusMisbehavingOnce(n / 2, returnNull))
                .build();
        try {
            GraphRun run;
            try {
                run = s.submit(g);
            } catch (Throwable thrown) {
                throw new AssertionError(
                        "submit threw " + thrown + "; active runs left behind: "
                                + s.activeRuns().size() + " " + s.activeRuns(),
                        thrown);
            }
            GraphRunException ex = awaitEnd(run, Duration.ofSeconds(5));
            for (int i = 0; i < n; i++) {
                assertThat(ran.get(i)).isLessThanOrEqualTo(1);
                assertThat(run.state(roots.get(i)).isTerminal()).isTrue();
                if (ex == null) {
                    assertThat(ran.get(i)).isEqualTo(1);
                }
            }
        } finally {
            s.shutdownNow();
            s.awaitTermination(Duration.ofSeconds(5));
        }
    }
}
