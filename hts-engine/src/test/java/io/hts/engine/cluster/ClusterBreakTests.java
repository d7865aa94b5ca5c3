package io.hts.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.SchedulerBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Adversarial tests of distributed groups over the in-memory {@link LoopbackCluster}: cancels at
 * awkward moments, resources and retries on members, empty and one-member groups, payloads left
 * behind, concurrent runs, bad settings.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ClusterBreakTests {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final LoopbackCluster cluster = new LoopbackCluster();
    private final List<Scheduler> schedulers = new ArrayList<>();
    private final List<CountDownLatch> toRelease = new ArrayList<>();

    @AfterEach
    void close() {
        toRelease.forEach(l -> {
            while (l.getCount() > 0) {
                l.countDown();
            }
        });
        schedulers.forEach(Scheduler::shutdownNow);
        schedulers.forEach(Scheduler::close);
        cluster.close();
    }

    private CountDownLatch latch() {
        CountDownLatch l = new CountDownLatch(1);
        toRelease.add(l);
        return l;
    }

    private Scheduler member(
            LoopbackCluster.Member engine,
            int threads,
            ClusterSettings settings,
            Consumer<SchedulerBuilder> more,
            TaskGraph... graphs) {
        SchedulerBuilder b = Scheduler.builder().threads(threads).cluster(engine, settings);
        more.accept(b);
        Scheduler s = b.build();
        schedulers.add(s);
        for (TaskGraph g : graphs) {
            s.register(g);
        }
        return s;
    }

    private Scheduler member(LoopbackCluster.Member engine, int threads, TaskGraph... graphs) {
        return member(engine, threads, ClusterSettings.defaults(), b -> {}, graphs);
    }

    private static void awaitUninterruptibly(CountDownLatch l) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (l.await(30, TimeUnit.SECONDS)) {
                        return;
                    }
                    throw new IllegalStateException("latch never released");
                } catch (InterruptedException ex) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ================================================================== resources

    /** A graph whose distributed members each take one unit of a resource with one unit. */
    private static TaskGraph licensed(int n, int slice) {
        TaskGraph g = TaskGraph.named("licensed");
        g.group("part", n, (i, t) -> t.resource("licence", 1).cpu(ctx -> i)).distributed(slice);
        return g;
    }

    /**
     * Members of a slice declare one unit each of a resource of one unit: were the units taken as
     * the members get READY, the first would hold the unit while its slice waits for the second,
     * which waits for the unit. They are taken where the slice runs, as it runs. The run must end.
     */
    @Test
    void resourcesDeclaredOnTheMembersDoNotDeadlockTheirSlice() throws Exception {
        Scheduler coordinator =
                member(cluster.member("a"), 1, ClusterSettings.defaults(), b -> b.resource("licence", 1));
        member(cluster.member("b"), 4, ClusterSettings.defaults(), b -> b.resource("licence", 1), licensed(4, 2));
        TaskGraph g = licensed(4, 2);

        GraphRun run = coordinator.submit(g);

        try {
            run.await(Duration.ofSeconds(10));
        } catch (TimeoutException ex) {
            run.cancel();
            throw new AssertionError("the run never ended: " + run.states(), ex);
        }
        assertThat(run.results(groupOf(g, "part"))).containsExactly(0, 1, 2, 3);
    }

    @SuppressWarnings("unchecked")
    private static <T> TaskGroup<T> groupOf(TaskGraph g, String name) {
        return (TaskGroup<T>) g.find(name + "[0]").orElseThrow().group();
    }

    // ================================================================== cancel races

    /**
     * The run is cancelled by a listener at the moment the first member of a slice bound for
     * another member starts (after the slice was chosen, before it is in flight): the run must
     * still end promptly, though the member holds the slice and never answers.
     */
    @Test
    void aCancelAsASliceStartsEndsTheRunPromptly() throws Exception {
        TaskGraph g = plain("plain", 4, 2);
        var a = cluster.member("a");
        var b = cluster.member("b");
        AtomicInteger cancels = new AtomicInteger();
        Scheduler[] holder = new Scheduler[1];
        Scheduler coordinator = member(
                a,
                1,
                ClusterSettings.defaults(),
                builder -> builder.listener(e -> {
                    if (e.type() == EventType.TASK_STARTED
                            && "part[0]".equals(e.taskName())
                            && cancels.getAndIncrement() == 0) {
                        holder[0].activeRun(e.runId()).ifPresent(GraphRun::cancel);
                    }
                }));
        holder[0] = coordinator;
        member(b, 4, plain("plain", 4, 2));
        b.hold(w -> true);

        GraphRun run = coordinator.submit(g);

        try {
            run.await(Duration.ofSeconds(10));
        } catch (TimeoutException ex) {
            throw new AssertionError("cancelled run never ended: " + run.states(), ex);
        } catch (GraphRunException expected) {
            // cancelled
        }
        assertThat(cancels.get()).isPositive();
        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(run.states().values()).allMatch(TaskState::isTerminal);
    }

    private static TaskGraph plain(String name, int n, int slice) {
        TaskGraph g = TaskGraph.named(name);
        g.group("part", n, (i, t) -> t.cpu(ctx -> i)).distributed(slice);
        return g;
    }

    /** Many runs cancelled at random moments over three members: every one ends, nothing RUNNING. */
    @Test
    void runsCancelledAtRandomMomentsAllEnd() throws Exception {
        Sweeps sweep = Sweeps.of(24, 2);
        Scheduler coordinator = member(cluster.member("a"), 2, Sweeps.of(24, 2).graph);
        member(cluster.member("b"), 2, Sweeps.of(24, 2).graph);
        member(cluster.member("c"), 2, Sweeps.of(24, 2).graph);
        List<GraphRun> runs = new ArrayList<>();
        java.util.Random random = new java.util.Random(17);
        for (int r = 0; r < 40; r++) {
            GraphRun run = coordinator.submit(sweep.graph);
            runs.add(run);
            int spin = random.nextInt(200_000);
            long x = 0;
            for (int k = 0; k < spin; k++) {
                x += k;
            }
            if (x >= 0) {
                if (random.nextBoolean()) {
                    run.cancel();
                } else {
                    run.cancel(sweep.shards.get(random.nextInt(24)));
                }
            }
        }
        for (GraphRun run : runs) {
            try {
                run.await(WAIT);
            } catch (TimeoutException ex) {
                throw new AssertionError("run " + run.runId() + " never ended: " + run.states(), ex);
            } catch (GraphRunException expected) {
                // cancelled
            }
            assertThat(run.states().values()).allMatch(TaskState::isTerminal);
            if (run.status() == RunStatus.SUCCEEDED) {
                assertThat(run.results(sweep.shards)).isEqualTo(Sweeps.expected(24, 10_000));
            }
        }
        await().atMost(WAIT).until(() -> cluster.stored().isEmpty());
    }

    /**
     * A member cancelled before its slice goes out (its dependency has not finished) is not run on
     * the worker: a cancelled task's body must not run.
     */
    @Test
    void aMemberCancelledBeforeItsSliceGoesIsNotRunRemotely() {
        Set<Integer> ranOnWorker = ConcurrentHashMap.newKeySet();
        CountDownLatch gate = latch();
        Supplier<TaskGraph> graph = () -> gated(gate, i -> {});
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, 1);
        member(b, 4, gated(gate, ranOnWorker::add));
        TaskGraph g = graph.get();

        GraphRun run = coordinator.submit(g);
        Task<?> second = g.find("part[1]").orElseThrow();
        run.cancel(second);
        gate.countDown();

        assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
        assertThat(run.state(second)).isEqualTo(TaskState.CANCELLED);
        assertThat(b.received()).isNotEmpty();
        assertThat(ranOnWorker).doesNotContain(1).contains(0, 2, 3);
    }

    private static TaskGraph gated(CountDownLatch gate, Consumer<Integer> onRun) {
        TaskGraph g = TaskGraph.named("gated");
        Task<Integer> open = g.task("open").cpu(ctx -> {
            awaitUninterruptibly(gate);
            return 0;
        });
        g.group(
                        "part",
                        4,
                        (i, t) -> t.after(open).cpu(ctx -> {
                            onRun.accept(i);
                            return i;
                        }))
                .distributed(4);
        return g;
    }

    // ================================================================== payloads

    /**
     * The run is cancelled while its slice runs on a worker whose body ignores interrupts; its
     * large results (by reference) are stored once the body returns: nobody reads them, so they
     * must not stay in the store.
     */
    @Test
    void resultsOfASliceCancelledWhileRunningDoNotStayInTheStore() {
        CountDownLatch started = latch();
        CountDownLatch finish = latch();
        ClusterSettings byReference = ClusterSettings.defaults().withInlineBytes(0);
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, 1, byReference, x -> {});
        Scheduler worker = member(b, 4, byReference, x -> {}, stubborn(started, finish));
        TaskGraph g = stubborn(new CountDownLatch(0), new CountDownLatch(0));

        GraphRun run = coordinator.submit(g);
        await().atMost(WAIT).until(() -> started.getCount() == 0);
        run.cancel();
        assertThatThrownBy(() -> run.await(WAIT)).isInstanceOf(GraphRunException.class);
        finish.countDown();

        await().atMost(WAIT).until(() -> worker.activeRuns().isEmpty());
        await().during(Duration.ofMillis(500))
                .atMost(WAIT)
                .untilAsserted(() -> assertThat(cluster.stored().keySet()).isEmpty());
    }

    private static TaskGraph stubborn(CountDownLatch started, CountDownLatch finish) {
        TaskGraph g = TaskGraph.named("stubborn");
        g.group(
                        "part",
                        2,
                        (i, t) -> t.cpu(ctx -> {
                            started.countDown();
                            awaitUninterruptibly(finish);
                            return new long[1_000];
                        }))
                .distributed(2);
        return g;
    }

    /** Results over the 64 KiB inline limit travel by reference with the default settings, and go afterwards. */
    @Test
    void largeResultsWithTheDefaultLimitTravelByReferenceAndGo() {
        Supplier<TaskGraph> graph = () -> {
            TaskGraph g = TaskGraph.named("big");
            g.group(
                            "part",
                            4,
                            (i, t) -> t.cpu(ctx -> {
                                byte[] b = new byte[70 * 1024];
                                b[0] = (byte) i;
                                return b;
                            }))
                    .distributed(2);
            return g;
        };
        Scheduler coordinator = member(cluster.member("a"), 1);
        var b = cluster.member("b");
        member(b, 4, graph.get());
        TaskGraph g = graph.get();

        GraphRun run = coordinator.execute(g);

        List<byte[]> results = run.results(groupOf(g, "part"));
        assertThat(results).hasSize(4);
        for (int i = 0; i < 4; i++) {
            assertThat(results.get(i)).hasSize(70 * 1024);
            assertThat(results.get(i)[0]).isEqualTo((byte) i);
        }
        assertThat(b.served()).isPositive();
        await().atMost(WAIT).until(() -> cluster.stored().isEmpty());
    }

    // ================================================================== shapes

    @Test
    void anEmptyDistributedGroupRunsAndItsSuccessorGetsNothing() {
        Supplier<TaskGraph> graph = () -> {
            TaskGraph g = TaskGraph.named("empty");
            TaskGroup<Integer> none =
                    g.group("none", 0, (i, t) -> t.cpu(ctx -> i)).distributed(2);
            g.task("after").after(none).cpu(ctx -> ctx.inputs(none).size());
            return g;
        };
        Scheduler coordinator = member(cluster.member("a"), 1);
        member(cluster.member("b"), 4, graph.get());
        TaskGraph g = graph.get();

        GraphRun run = coordinator.execute(g);

        assertThat(run.result(g.find("after").orElseThrow())).isEqualTo(0);
    }

    @Test
    void aGroupOfOneMemberAndTwoDistributedGroupsInSequence() {
        Supplier<TaskGraph> graph = () -> {
            TaskGraph g = TaskGraph.named("seq");
            TaskGroup<Integer> one =
                    g.group("one", 1, (i, t) -> t.cpu(ctx -> 41)).distributed();
            TaskGroup<Integer> first = g.group(
                            "first",
                            6,
                            (i, t) -> t.after(one).cpu(ctx -> ctx.inputs(one).get(0) + i))
                    .distributed(2);
            g.group(
                            "second",
                            6,
                            (i, t) -> t.after(first)
                                    .cpu(ctx -> ctx.inputs(first).stream()
                                                    .mapToInt(Integer::intValue)
                                                    .sum()
                                            + i))
                    .distributed(3);
            return g;
        };
        Scheduler coordinator = member(cluster.member("a"), 1);
        var b = cluster.member("b");
        member(b, 4, graph.get());
        member(cluster.member("c"), 4, graph.get());
        TaskGraph g = graph.get();

        GraphRun run = coordinator.execute(g);

        int firstSum = IntStream.range(0, 6).map(i -> 41 + i).sum();
        assertThat(run.results(groupOf(g, "one"))).containsExactly(41);
        assertThat(run.results(groupOf(g, "first"))).containsExactly(41, 42, 43, 44, 45, 46);
        assertThat(run.results(groupOf(g, "second")))
                .containsExactly(
                        IntStream.range(0, 6).map(i -> firstSum + i).boxed().toArray(Integer[]::new));
    }

    // ================================================================== retries, time-outs, failures

    /** A member that fails once on the worker is retried alone, where the group's choice gives, and succeeds. */
    @Test
    void retriesDeclaredOnTheMembersGoOutAloneAndSucceed() {
        Scheduler coordinator = member(cluster.member("a"), 1);
        var b = cluster.member("b");
        member(b, 4, retried(true));
        TaskGraph g = retried(false);

        GraphRun run = coordinator.execute(g);

        assertThat(run.results(groupOf(g, "part"))).containsExactly(0, 1, 2, 3);
        assertThat(b.received()).isNotEmpty();
        assertThat(FAILED_ONCE).isNotEmpty(); // some failed on b, and their retries succeeded
    }

    /** The members b failed on once (a retry of any of them then succeeds, wherever it runs). */
    private static final Set<Integer> FAILED_ONCE = ConcurrentHashMap.newKeySet();

    private static TaskGraph retried(boolean fail) {
        TaskGraph g = TaskGraph.named("retried");
        g.group(
                        "part",
                        4,
                        (i, t) -> t.retries(1).cpu(ctx -> {
                            if (fail && FAILED_ONCE.add(i)) {
                                throw new IllegalStateException("not here, this once");
                            }
                            return i;
                        }))
                .distributed(2);
        return g;
    }

    /** A time-out with a body that ignores interrupts on the worker: the run still ends, FAILED by the time-out. */
    @Test
    void aTimeOutEndsTheRunThoughTheRemoteBodyIgnoresInterrupts() {
        CountDownLatch finish = latch();
        Scheduler coordinator = member(cluster.member("a"), 1);
        member(cluster.member("b"), 4, slowGraph(finish));
        TaskGraph g = slowGraph(new CountDownLatch(0));

        GraphRun run = coordinator.submit(g);

        assertThatThrownBy(() -> run.await(WAIT))
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(TimeoutException.class);
        assertThat(run.states().values()).allMatch(TaskState::isTerminal);
        finish.countDown();
    }

    private static TaskGraph slowGraph(CountDownLatch finish) {
        TaskGraph g = TaskGraph.named("slow");
        g.group(
                        "part",
                        4,
                        (i, t) -> t.timeout(Duration.ofMillis(300)).cpu(ctx -> {
                            awaitUninterruptibly(finish);
                            return i;
                        }))
                .distributed(2);
        return g;
    }

    /** A remote failure under FAIL_FAST: the run ends FAILED with the remote failure as its cause. */
    @Test
    void failFastWithARemoteFailure() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, 1);
        member(b, 4, Sweeps.failing(8, 2).graph);
        Sweeps sweep = Sweeps.of(8, 2);

        GraphRun run = coordinator.submit(sweep.graph, RunOptions.failureMode(FailureMode.FAIL_FAST));

        assertThatThrownBy(() -> run.await(WAIT))
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(RemoteTaskException.class);
        assertThat(run.states().values()).allMatch(TaskState::isTerminal);
        await().atMost(WAIT).until(() -> cluster.stored().isEmpty());
    }

    // ================================================================== awkward results

    /**
     * A result so deeply nested that Java serialization overflows the worker's stack (an Error,
     * not an exception): the slice must still answer, failing its members, and the run must end.
     */
    @Test
    void aResultWhoseEncodingOverflowsTheStackFailsItsTasksAndTheRunEnds() throws Exception {
        Supplier<TaskGraph> graph = () -> {
            TaskGraph g = TaskGraph.named("deep");
            g.group(
                            "part",
                            2,
                            (i, t) -> t.cpu(ctx -> {
                                List<Object> root = new ArrayList<>();
                                List<Object> at = root;
                                for (int d = 0; d < 200_000; d++) {
                                    List<Object> next = new ArrayList<>();
                                    at.add(next);
                                    at = next;
                                }
                                return root;
                            }))
                    .distributed(2);
            return g;
        };
        Scheduler coordinator = member(cluster.member("a"), 1);
        member(cluster.member("b"), 4, graph.get());
        TaskGraph g = graph.get();

        GraphRun run = coordinator.submit(g);

        try {
            run.await(WAIT);
            throw new AssertionError("the run succeeded");
        } catch (TimeoutException ex) {
            run.cancel();
            throw new AssertionError("the run never ended: " + run.states(), ex);
        } catch (GraphRunException expected) {
            assertThat(run.states().values()).containsOnly(TaskState.FAILED);
            assertThat(run.error(g.find("part[0]").orElseThrow()))
                    .get()
                    .asString()
                    .contains("java.util.ArrayList cannot be encoded")
                    .contains("nested too deeply");
        }
    }

    /** A remote body returning null: its task succeeds with null. */
    @Test
    void aRemoteNullResultArrivesAsNull() {
        Supplier<TaskGraph> graph = () -> {
            TaskGraph g = TaskGraph.named("nulls");
            g.group("part", 4, (i, t) -> t.cpu(ctx -> i % 2 == 0 ? null : "x" + i))
                    .distributed(2);
            return g;
        };
        Scheduler coordinator = member(cluster.member("a"), 1);
        var b = cluster.member("b");
        member(b, 4, graph.get());
        TaskGraph g = graph.get();

        GraphRun run = coordinator.execute(g);

        assertThat(run.results(groupOf(g, "part"))).containsExactly(null, "x1", null, "x3");
        assertThat(b.served()).isPositive();
    }

    /**
     * The whole distributed group is cancelled (run.cancel(group)) while its slices run on a
     * worker, with bodies that stop when they see ctx.isCancelled(): the cancel must reach them,
     * and the run must end.
     */
    @Test
    void cancellingTheWholeGroupReachesItsRemoteBodies() throws Exception {
        CountDownLatch entered = latch();
        Supplier<TaskGraph> graph = () -> cooperative(entered);
        Scheduler coordinator = member(cluster.member("a"), 1);
        member(cluster.member("b"), 4, graph.get());
        TaskGraph g = cooperative(new CountDownLatch(0));

        GraphRun run = coordinator.submit(g);
        await().atMost(WAIT).until(() -> entered.getCount() == 0);
        run.cancel(groupOf(g, "part"));

        try {
            run.await(Duration.ofSeconds(10));
            throw new AssertionError("the run succeeded");
        } catch (TimeoutException ex) {
            run.cancel();
            throw new AssertionError("the run never ended: " + run.states(), ex);
        } catch (GraphRunException expected) {
            assertThat(run.states().values()).containsOnly(TaskState.CANCELLED);
        }
    }

    private static TaskGraph cooperative(CountDownLatch entered) {
        TaskGraph g = TaskGraph.named("cooperative");
        g.group(
                        "part",
                        2,
                        (i, t) -> t.cpu(ctx -> {
                            entered.countDown();
                            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                            while (!ctx.isCancelled() && System.nanoTime() < deadline) {
                                Thread.onSpinWait();
                            }
                            return i;
                        }))
                .distributed(2);
        return g;
    }

    // ================================================================== concurrency

    /** Runs coordinated by all three members at once, payloads by reference: every shard counted once. */
    @Test
    void manyConcurrentRunsFromEveryMember() throws Exception {
        ClusterSettings byReference = ClusterSettings.defaults().withInlineBytes(0);
        List<Scheduler> all = new ArrayList<>();
        for (String id : List.of("a", "b", "c")) {
            all.add(member(cluster.member(id), 2, byReference, x -> {}, Sweeps.of(24, 3).graph));
        }
        Sweeps sweep = Sweeps.of(24, 3);
        List<GraphRun> runs = new ArrayList<>();
        for (int r = 0; r < 30; r++) {
            runs.add(all.get(r % 3).submit(sweep.graph));
        }
        for (GraphRun run : runs) {
            run.await(WAIT);
            assertThat(run.results(sweep.shards)).isEqualTo(Sweeps.expected(24, 10_000));
            assertThat(run.results(sweep.checks)).containsExactly(276L, 277L);
        }
        await().atMost(WAIT).until(() -> cluster.stored().isEmpty());
    }

    // ================================================================== bad input

    @Test
    void badSettingsAndSliceSizesAreRefusedNamingTheOffendingThing() {
        TaskGraph g = TaskGraph.named("bad");
        TaskGroup<Integer> group = g.group("part", 2, (i, t) -> t.cpu(ctx -> i));
        assertThatThrownBy(() -> group.distributed(0))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("group 'part' of graph 'bad'")
                .hasMessageContaining("was 0");
        assertThatThrownBy(() -> ClusterSettings.defaults().withInlineBytes(-1))
                .hasMessageContaining("inlineBytes")
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> ClusterSettings.defaults().withSliceAttempts(0))
                .hasMessageContaining("sliceAttempts");
        assertThatThrownBy(() ->
                        new ClusterSettings(JavaSerializationCodec.defaults(), 10, Duration.ofMillis(1), Double.NaN, 3))
                .hasMessageContaining("overhead");
        assertThatThrownBy(() -> new ClusterSettings(JavaSerializationCodec.defaults(), 10, Duration.ZERO, 0.05, 3))
                .hasMessageContaining("roundTrip");
        assertThatThrownBy(() -> Scheduler.builder().cluster(null)).hasMessageContaining("engine");
        var a = cluster.member("a");
        member(a, 1);
        assertThatThrownBy(() -> Scheduler.builder().threads(1).cluster(a).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("serves already");
    }
}
