package io.hts.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.NoDeviceException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.SchedulerBuilder;
import io.hts.engine.support.ClusterRuns;
import io.hts.engine.support.FakeGpuBackend;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A demanding user's tests of members whose scheduler is shut down (published DOWN at once, no new
 * slices, their own runs still finish) and of the texts of errors raised on workers, over the
 * in-memory {@link LoopbackCluster}. Every test checks: the run ends, every task in one final state,
 * every shard once with its right result.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HealthBreakTests {

    private static final Duration WAIT = Duration.ofSeconds(15);

    private final List<LoopbackCluster> clusters = new CopyOnWriteArrayList<>();
    private final LoopbackCluster cluster = newCluster();
    private final List<Scheduler> schedulers = new CopyOnWriteArrayList<>();
    private final List<DeviceBackend> gpus = new CopyOnWriteArrayList<>();
    private final Map<String, Scheduler> schedulerOf = new ConcurrentHashMap<>();
    private final Map<String, LoopbackCluster.Member> engineOf = new ConcurrentHashMap<>();
    /** Released by the tests (and at the end): bodies on the gated members wait for it. */
    private final CountDownLatch gate = new CountDownLatch(1);
    /** Members whose bodies wait for the gate. */
    private final Set<String> gated = ConcurrentHashMap.newKeySet();
    /** Body runs per member id and group index: "b/3". */
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    /** Bodies started per member. */
    private final Map<String, AtomicInteger> started = new ConcurrentHashMap<>();

    @AfterEach
    void close() {
        gate.countDown();
        schedulers.forEach(Scheduler::shutdownNow);
        schedulers.forEach(Scheduler::close);
        gpus.forEach(DeviceBackend::close);
        clusters.forEach(LoopbackCluster::close);
    }

    private LoopbackCluster newCluster() {
        LoopbackCluster c = new LoopbackCluster();
        clusters.add(c);
        return c;
    }

    // ================================================================== set-up

    /** How a member of group "k" is built on member {@code where}. */
    private interface Shape {
        Task<Integer> member(String where, int i, TaskBuilder t);
    }

    /** A graph "g": a seed (1000) and a distributed group "k" of {@code n}. */
    private static final class Graph {
        final TaskGraph graph;
        final Task<Integer> seed;
        final TaskGroup<Integer> group;

        Graph(String where, int n, int slice, Shape shape, CountDownLatch seedGate) {
            graph = TaskGraph.named("g");
            seed = graph.task("seed").cpu(ctx -> {
                if (seedGate != null) {
                    seedGate.await();
                }
                return 1_000;
            });
            group = graph.group("k", n, (i, t) -> shape.member(where, i, t.after(seed)))
                    .distributed(slice);
        }
    }

    private LoopbackCluster.Member member(
            LoopbackCluster cl, String id, int gpuCount, Consumer<SchedulerBuilder> more, TaskGraph... graphs) {
        LoopbackCluster.Member engine = cl.member(id);
        SchedulerBuilder b = Scheduler.builder().threads(2).cluster(engine);
        if (gpuCount > 0) {
            FakeGpuBackend g = new FakeGpuBackend(2);
            gpus.add(g);
            b.gpuBackend(g);
        }
        more.accept(b);
        Scheduler s = b.build();
        schedulers.add(s);
        schedulerOf.put(id, s);
        engineOf.put(id, engine);
        for (TaskGraph g : graphs) {
            s.register(g);
        }
        return engine;
    }

    private LoopbackCluster.Member member(String id, int gpuCount, TaskGraph... graphs) {
        return member(cluster, id, gpuCount, x -> {}, graphs);
    }

    private Scheduler scheduler(String id) {
        return schedulerOf.get(id);
    }

    /** A body that counts where it ran, waits for the gate on gated members, returns 1000 + index. */
    private Integer body(String where, int index) throws InterruptedException {
        started.computeIfAbsent(where, k -> new AtomicInteger()).incrementAndGet();
        if (gated.contains(where)) {
            gate.await();
        }
        runs.computeIfAbsent(where + "/" + index, k -> new AtomicInteger()).incrementAndGet();
        return 1_000 + index;
    }

    private Shape cpu() {
        return (where, i, t) -> t.cpu(ctx -> body(where, ctx.groupIndex()));
    }

    private Shape gpuOnly() {
        return (where, i, t) -> t.gpu(ctx -> body(where, ctx.groupIndex()));
    }

    private int startedOn(String where) {
        AtomicInteger n = started.get(where);
        return n == null ? 0 : n.get();
    }

    private static List<Integer> expected(int n) {
        return ClusterRuns.expected(n);
    }

    private static GraphRun ended(GraphRun run) throws InterruptedException {
        return ClusterRuns.ended(run, WAIT);
    }

    private static void succeeded(GraphRun run, Graph g, int n) throws InterruptedException {
        ended(run);
        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(n));
    }

    private static DeviceHealth healthSeenBy(LoopbackCluster.Member viewer, String id) {
        return viewer.members().stream()
                .filter(m -> m.id().equals(id))
                .map(ClusterMember::health)
                .findFirst()
                .orElseThrow();
    }

    private void terminates(String id) throws InterruptedException {
        assertThat(scheduler(id).awaitTermination(WAIT)).as("%s terminates", id).isTrue();
    }

    // ================================================================== a worker shut down

    /**
     * A worker shut down while slices of another coordinator run on it: it is DOWN at once, gets no
     * new slice, and the slices it runs finish there; the coordinator's run succeeds.
     */
    @Test
    void aWorkerShutDownWhileOthersSlicesRunOnItFinishesThemAndGetsNoMore() throws Exception {
        Shape shape = cpu();
        var a = member("a", 0, new Graph("a", 24, 2, shape, null).graph);
        var b = member("b", 0, new Graph("b", 24, 2, shape, null).graph);
        member("c", 0, new Graph("c", 24, 2, shape, null).graph);
        gated.add("b");
        Graph g = new Graph("a", 24, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> startedOn("b") > 0);
        scheduler("b").shutdown();
        int receivedAtShutdown = b.received().size();

        assertThat(healthSeenBy(a, "b")).isEqualTo(DeviceHealth.DOWN);
        gate.countDown();
        succeeded(run, g, 24);
        assertThat(b.received()).hasSize(receivedAtShutdown);
        terminates("b");
        // and a second run sends b nothing
        succeeded(scheduler("a").submit(g.graph), g, 24);
        assertThat(b.received()).hasSize(receivedAtShutdown);
    }

    /**
     * Was (fixed): the slices b ran failed on a with RemoteTaskException "TaskCancelledException: run 2 of
     * graph 'g' was cancelled" (b's own run id, meaningless on a) and the run FAILED.
     *
     * A worker's shutdownNow() cancels the runs of its scheduler, among them the slices other
     * coordinators sent it. That is the worker leaving, not the coordinator's user cancelling: the
     * coordinator's run must not end CANCELLED or FAILED for it; the slices go to the other members
     * as a lost member's do, and the run succeeds.
     */
    @Test
    void aWorkersShutdownNowDoesNotCancelOrFailTheRunsOfOtherCoordinators() throws Exception {
        Shape shape = cpu();
        member("a", 0, new Graph("a", 24, 2, shape, null).graph);
        member("b", 0, new Graph("b", 24, 2, shape, null).graph);
        member("c", 0, new Graph("c", 24, 2, shape, null).graph);
        gated.add("b");
        Graph g = new Graph("a", 24, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> startedOn("b") > 0);
        List<GraphRun> cancelled = scheduler("b").shutdownNow();

        assertThat(cancelled).as("b's runs of a's slices").isNotEmpty();
        ended(run);
        assertThat(run.status())
                .as("a's run after b's shutdownNow: %s %s", run.states(), run.failures())
                .isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(24));
        terminates("b");
    }

    /**
     * Slices that reached a worker's engine before it was shut down but its scheduler after (a
     * coordinator's view is never quite current): the worker refuses them, and they go elsewhere.
     */
    @Test
    void slicesReachingAWorkerAfterItsShutdownGoElsewhere() throws Exception {
        Shape shape = cpu();
        member("a", 0, new Graph("a", 24, 2, shape, null).graph);
        var b = member("b", 0, new Graph("b", 24, 2, shape, null).graph);
        member("c", 0, new Graph("c", 24, 2, shape, null).graph);
        b.hold(w -> true);
        Graph g = new Graph("a", 24, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() > 0);
        scheduler("b").shutdown();
        b.release();

        succeeded(run, g, 24);
        assertThat(startedOn("b")).isZero();
        terminates("b");
    }

    /** As above, the slices reaching the worker only after its scheduler terminated. */
    @Test
    void slicesReachingAWorkerAfterItTerminatedGoElsewhere() throws Exception {
        Shape shape = cpu();
        member("a", 0, new Graph("a", 24, 2, shape, null).graph);
        var b = member("b", 0, new Graph("b", 24, 2, shape, null).graph);
        member("c", 0, new Graph("c", 24, 2, shape, null).graph);
        b.hold(w -> true);
        Graph g = new Graph("a", 24, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() > 0);
        scheduler("b").shutdown();
        terminates("b");
        b.release();

        succeeded(run, g, 24);
        assertThat(startedOn("b")).isZero();
    }

    /** A retry held on a worker that is shut down meanwhile, delivered after: it goes elsewhere. */
    @Test
    void aRetryReachingAWorkerAfterItsShutdownGoesElsewhere() throws Exception {
        Set<Integer> failedOnce = ConcurrentHashMap.newKeySet();
        Shape shape = (where, i, t) -> t.retries(2).gpu(ctx -> {
            if (ctx.groupIndex() == 3 && failedOnce.add(3)) {
                throw new IllegalStateException("transient");
            }
            return body(where, ctx.groupIndex());
        });
        member("a", 0, new Graph("a", 4, 2, shape, null).graph);
        var b = member("b", 1, new Graph("b", 4, 2, shape, null).graph);
        var c = member("c", 1, new Graph("c", 4, 2, shape, null).graph);
        b.hold(w -> w.size() == 1);
        c.hold(w -> w.size() == 1);
        Graph g = new Graph("a", 4, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() + c.holding() == 1);
        var holder = b.holding() == 1 ? b : c;
        var other = holder == b ? c : b;
        String holderId = holder == b ? "b" : "c";
        other.hold(w -> false);
        scheduler(holderId).shutdown();
        holder.release();

        succeeded(run, g, 4);
        assertThat(runs.get(holderId + "/3")).isNull();
    }

    // ================================================================== a coordinator shut down

    /** The coordinator shut down while its run waits: its slices go to the other members, it succeeds. */
    @Test
    void aCoordinatorShutDownWhileItsRunWaitsStillSendsItsSlicesToTheOthers() throws Exception {
        CountDownLatch seedGate = new CountDownLatch(1);
        Shape shape = cpu();
        var a = member("a", 0, new Graph("a", 24, 2, shape, seedGate).graph);
        var b = member("b", 0, new Graph("b", 24, 2, shape, null).graph);
        var c = member("c", 0, new Graph("c", 24, 2, shape, null).graph);
        Graph g = new Graph("a", 24, 2, shape, seedGate);

        GraphRun run = scheduler("a").submit(g.graph);
        scheduler("a").shutdown();
        assertThat(healthSeenBy(b, "a")).isEqualTo(DeviceHealth.DOWN);
        assertThatThrownBy(() -> scheduler("a").submit(g.graph)).isInstanceOf(RejectedExecutionException.class);
        seedGate.countDown();

        succeeded(run, g, 24);
        assertThat(b.received().size() + c.received().size()).isPositive();
        terminates("a");
        assertThat(a.received()).isEmpty();
    }

    /** The coordinator shut down while a member's retry is held on a worker: the run still ends right. */
    @Test
    void aCoordinatorShutDownWithARetryInFlightFinishesItsRun() throws Exception {
        Set<Integer> failedOnce = ConcurrentHashMap.newKeySet();
        Shape shape = (where, i, t) -> t.retries(2).gpu(ctx -> {
            if (ctx.groupIndex() == 1 && failedOnce.add(1)) {
                throw new IllegalStateException("transient");
            }
            return body(where, ctx.groupIndex());
        });
        member("a", 0, new Graph("a", 4, 2, shape, null).graph);
        var b = member("b", 1, new Graph("b", 4, 2, shape, null).graph);
        b.hold(w -> w.size() == 1);
        Graph g = new Graph("a", 4, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() == 1);
        scheduler("a").shutdown();
        b.release();

        succeeded(run, g, 4);
        terminates("a");
    }

    /** The coordinator's shutdownNow() with slices held on a worker: the run ends CANCELLED, nothing left. */
    @Test
    void aCoordinatorsShutdownNowWithRemoteSlicesEndsItsRunCancelled() throws Exception {
        Shape shape = gpuOnly();
        member("a", 0, new Graph("a", 6, 2, shape, null).graph);
        var b = member("b", 1, new Graph("b", 6, 2, shape, null).graph);
        b.hold(w -> true);
        Graph g = new Graph("a", 6, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() == 3);
        assertThat(scheduler("a").shutdownNow()).containsExactly(run);

        ended(run);
        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        terminates("a");
        b.release();
        await().atMost(WAIT).until(() -> cluster.stored().isEmpty());
    }

    /**
     * Coordinator a and worker b both shut down while a's slices are held at b's engine; b then
     * refuses them (it is shut down). a's own running run must still finish, its slices on a itself
     * (the only member left, DOWN to others but not to its own runs). Was (fixed): the refused slices
     * went to a through the engine, a's own SliceServer refused them too ("member loopback/a is
     * shutting down and takes no slices"), and the members failed with MemberLostException "no
     * member left".
     */
    @Test
    void aShutDownCoordinatorKeepsTheSlicesAShutDownWorkerRefused() throws Exception {
        Shape shape = cpu();
        member("a", 0, new Graph("a", 8, 2, shape, null).graph);
        var b = member("b", 0, new Graph("b", 8, 2, shape, null).graph);
        b.hold(w -> true);
        Graph g = new Graph("a", 8, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() > 0);
        scheduler("a").shutdown();
        scheduler("b").shutdown();
        b.release();

        ended(run);
        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(8));
        terminates("a");
    }

    // ================================================================== races and several members

    /**
     * submit() racing shutdown() of coordinator and worker: a run admitted must end SUCCEEDED with
     * its results, a run refused is refused with RejectedExecutionException. Was (fixed): admitted
     * runs FAILED with MemberLostException ("no member left", the coordinator itself "is shutting down and
     * takes no slices"), see aShutDownCoordinatorKeepsTheSlicesAShutDownWorkerRefused.
     */
    @Test
    void submitRacingShutdownEitherRunsRightOrIsRefused() throws Exception {
        Shape shape = cpu();
        for (int round = 0; round < 15; round++) {
            LoopbackCluster cl = newCluster();
            String a = "a" + round;
            String b = "b" + round;
            member(cl, a, 0, x -> {}, new Graph(a, 8, 2, shape, null).graph);
            member(cl, b, 0, x -> {}, new Graph(b, 8, 2, shape, null).graph);
            Graph g = new Graph(a, 8, 2, shape, null);
            List<GraphRun> admitted = new CopyOnWriteArrayList<>();
            CountDownLatch going = new CountDownLatch(1);
            Thread submitter = new Thread(() -> {
                try {
                    while (true) {
                        admitted.add(scheduler(a).submit(g.graph));
                        going.countDown();
                    }
                } catch (RejectedExecutionException refused) {
                    // shut down
                }
            });
            submitter.start();
            assertThat(going.await(10, TimeUnit.SECONDS)).isTrue();
            // the worker and the coordinator go down while runs come
            scheduler(b).shutdown();
            scheduler(a).shutdown();
            submitter.join(TimeUnit.SECONDS.toMillis(10));
            assertThat(submitter.isAlive()).isFalse();
            for (GraphRun run : admitted) {
                succeeded(run, g, 8);
            }
            terminates(a);
            terminates(b);
        }
    }

    /** Three members, each coordinating a run with slices on the others, shut down at once: every run succeeds. */
    @Test
    void threeMembersShutDownAtOnceEachWithARunStillFinishTheirRuns() throws Exception {
        Shape shape = cpu();
        List<String> ids = List.of("a", "b", "c");
        for (String id : ids) {
            member(id, 0, new Graph(id, 24, 2, shape, null).graph);
        }
        gated.addAll(ids);
        List<GraphRun> mine = new ArrayList<>();
        List<Graph> graphs = new ArrayList<>();
        for (String id : ids) {
            Graph g = new Graph(id, 24, 2, shape, null);
            graphs.add(g);
            mine.add(scheduler(id).submit(g.graph));
        }
        await().atMost(WAIT).until(() -> ids.stream().allMatch(id -> startedOn(id) > 0));
        List<Thread> stoppers = new ArrayList<>();
        for (String id : ids) {
            Thread t = new Thread(() -> scheduler(id).shutdown());
            t.start();
            stoppers.add(t);
        }
        for (Thread t : stoppers) {
            t.join(10_000);
        }
        for (String id : ids) {
            assertThat(healthSeenBy(engineOf.get("a"), id)).isEqualTo(DeviceHealth.DOWN);
        }
        gate.countDown();

        for (int k = 0; k < 3; k++) {
            succeeded(mine.get(k), graphs.get(k), 24);
        }
        for (String id : ids) {
            terminates(id);
        }
    }

    // ================================================================== GPU-only groups

    /** A GPU member shut down gets no GPU-only slices; the other GPU member runs them all. */
    @Test
    void aGpuMemberShutDownGetsNoGpuOnlySlices() throws Exception {
        Shape shape = gpuOnly();
        member("a", 0, new Graph("a", 8, 2, shape, null).graph);
        var b = member("b", 1, new Graph("b", 8, 2, shape, null).graph);
        var c = member("c", 1, new Graph("c", 8, 2, shape, null).graph);
        Graph g = new Graph("a", 8, 2, shape, null);

        scheduler("b").shutdown();
        succeeded(scheduler("a").submit(g.graph), g, 8);

        assertThat(b.received()).isEmpty();
        assertThat(c.received()).isNotEmpty();
    }

    /**
     * The only GPU members shut down while the coordinator (no GPU) waits to send its GPU-only
     * slices: nobody may take them, so the members fail with NoDeviceException naming the group, and
     * the run ends.
     */
    @Test
    void gpuOnlySlicesWithEveryGpuMemberShutDownFailNamingTheGroup() throws Exception {
        CountDownLatch seedGate = new CountDownLatch(1);
        Shape shape = gpuOnly();
        member("a", 0, new Graph("a", 8, 2, shape, seedGate).graph);
        var b = member("b", 1, new Graph("b", 8, 2, shape, null).graph);
        var c = member("c", 1, new Graph("c", 8, 2, shape, null).graph);
        Graph g = new Graph("a", 8, 2, shape, seedGate);

        GraphRun run = scheduler("a").submit(g.graph, RunOptions.failureMode(FailureMode.CONTINUE));
        scheduler("b").shutdown();
        scheduler("c").close();
        seedGate.countDown();

        ended(run);
        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        for (int k = 0; k < 8; k++) {
            assertThat(run.error(g.group.get(k)))
                    .get()
                    .isInstanceOf(NoDeviceException.class)
                    .extracting(Throwable::getMessage)
                    .asString()
                    .contains("group 'k'");
        }
        assertThat(b.received()).isEmpty();
        assertThat(c.received()).isEmpty();
    }

    /**
     * A GPU member shut down while GPU-only slices of another coordinator run on it: they finish
     * there; the slices not yet sent go to the other GPU member.
     */
    @Test
    void aGpuMemberShutDownMidRunFinishesWhatItRunsAndTheRestGoesToTheOther() throws Exception {
        Shape shape = gpuOnly();
        member("a", 0, new Graph("a", 40, 2, shape, null).graph);
        var b = member("b", 1, new Graph("b", 40, 2, shape, null).graph);
        var c = member("c", 1, new Graph("c", 40, 2, shape, null).graph);
        gated.add("b");
        gated.add("c");
        Graph g = new Graph("a", 40, 2, shape, null);

        GraphRun run = scheduler("a").submit(g.graph);
        await().atMost(WAIT).until(() -> startedOn("b") > 0);
        scheduler("b").shutdown();
        int atShutdown = b.received().size();
        gate.countDown();

        succeeded(run, g, 40);
        assertThat(b.received()).hasSize(atShutdown);
        assertThat(c.received()).isNotEmpty();
        terminates("b");
    }

    // ================================================================== texts of errors raised on workers

    private static final String MULTI_LINE =
            "first line quotes 'k[0]'\nsecond line 'k[1]'\r\n\ttask 'k[1]' was cancelled";

    /**
     * Bodies failing on worker b (a has no GPU, so a group mixing GPU-only and CPU-only members goes
     * to b): the coordinator's error is a RemoteTaskException naming the real task, and the text the
     * body wrote, as written, whatever it quotes; causes and suppressed exceptions are in the trace
     * as written.
     */
    @Test
    void bodyTextsReachTheCoordinatorExactlyAsWritten() throws Exception {
        Shape shape = (where, i, t) -> switch (i) {
            case 0 -> t.gpu(ctx -> body(where, ctx.groupIndex()));
            case 1 ->
                t.cpu(ctx -> {
                    throw new IllegalStateException();
                });
            case 2 ->
                t.cpu(ctx -> {
                    throw new IllegalStateException(MULTI_LINE);
                });
            case 3 ->
                t.cpu(ctx -> {
                    IllegalStateException e =
                            new IllegalStateException("outer 'k[1]'", new IOException("inner 'k[0]'"));
                    e.addSuppressed(new IllegalArgumentException("suppressed 'k[1]'"));
                    throw e;
                });
            case 4 ->
                t.gpu(ctx -> {
                    throw new TimeoutException("task 'k[1]' timed out after 1 s");
                });
            case 5 ->
                t.gpu(ctx -> {
                    throw new IllegalStateException("waits for 'k[0]' and 'k[1]' on the GPU");
                });
            case 6 ->
                t.gpu(ctx -> {
                    throw new IllegalStateException((String) null);
                });
            default ->
                t.cpu(ctx -> {
                    throw new Exception("checked, 'k[0]'");
                });
        };
        member("a", 0, new Graph("a", 8, 2, shape, null).graph);
        var b = member("b", 1, new Graph("b", 8, 2, shape, null).graph);
        Graph g = new Graph("a", 8, 2, shape, null);

        GraphRun run = ended(scheduler("a").submit(g.graph, RunOptions.failureMode(FailureMode.CONTINUE)));

        assertThat(b.received()).isNotEmpty();
        assertThat(run.result(g.group.get(0))).isEqualTo(1_000);
        String on = " failed on member loopback/b (b): ";
        Map<Integer, String> want = Map.of(
                1, "java.lang.IllegalStateException",
                2, "java.lang.IllegalStateException: " + MULTI_LINE,
                3, "java.lang.IllegalStateException: outer 'k[1]'",
                4, "java.util.concurrent.TimeoutException: task 'k[1]' timed out after 1 s",
                5, "java.lang.IllegalStateException: waits for 'k[0]' and 'k[1]' on the GPU",
                6, "java.lang.IllegalStateException",
                7, "java.lang.Exception: checked, 'k[0]'");
        for (int k = 1; k < 8; k++) {
            Throwable ex = run.error(g.group.get(k)).orElseThrow();
            assertThat(ex).as("k[%d]", k).isInstanceOf(RemoteTaskException.class);
            assertThat(ex.getMessage()).as("k[%d]", k).isEqualTo("task 'k[" + k + "]'" + on + want.get(k));
        }
        RemoteTaskException nested =
                (RemoteTaskException) run.error(g.group.get(3)).orElseThrow();
        assertThat(nested.remoteExceptionClass()).isEqualTo("java.lang.IllegalStateException");
        assertThat(nested.remoteStackTrace())
                .contains("outer 'k[1]'")
                .contains("Caused by: java.io.IOException: inner 'k[0]'")
                .contains("Suppressed: java.lang.IllegalArgumentException: suppressed 'k[1]'");
        assertThat(((RemoteTaskException) run.error(g.group.get(2)).orElseThrow()).remoteStackTrace())
                .contains(MULTI_LINE);
    }

    /**
     * Bodies on b throwing cancellation-like exceptions of their own (texts alike the worker's own
     * texts): the coordinator's states and texts must be those of the same graph run on one
     * scheduler, the texts as the bodies wrote them.
     */
    @Test
    void cancellationLikeExceptionsOfBodiesEndAsOnOneScheduler() throws Exception {
        Shape shape = (where, i, t) -> switch (i) {
            case 0 -> t.gpu(ctx -> body(where, ctx.groupIndex()));
            case 1 ->
                t.cpu(ctx -> {
                    throw new java.util.concurrent.CancellationException("task 'k[0]' was cancelled");
                });
            case 2 ->
                t.cpu(ctx -> {
                    throw new io.hts.engine.graph.TaskCancelledException("task 'k[1]' cancelled by the body");
                });
            default ->
                t.gpu(ctx -> {
                    throw new InterruptedException("'k[1]' interrupted by the body");
                });
        };
        Graph local = new Graph("local", 4, 2, shape, null);
        FakeGpuBackend gpu = new FakeGpuBackend(2);
        gpus.add(gpu);
        GraphRun alone;
        try (Scheduler one = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            alone = ended(one.submit(local.graph, RunOptions.failureMode(FailureMode.CONTINUE)));
        }
        member("a", 0, new Graph("a", 4, 2, shape, null).graph);
        var b = member("b", 1, new Graph("b", 4, 2, shape, null).graph);
        Graph g = new Graph("a", 4, 2, shape, null);

        GraphRun run = ended(scheduler("a").submit(g.graph, RunOptions.failureMode(FailureMode.CONTINUE)));

        assertThat(b.received()).isNotEmpty();
        for (int k = 0; k < 4; k++) {
            assertThat(run.state(g.group.get(k))).as("k[%d]", k).isEqualTo(alone.state(local.group.get(k)));
            var want = alone.error(local.group.get(k));
            if (want.isPresent()) {
                assertThat(run.error(g.group.get(k)).orElseThrow().getMessage())
                        .as("k[%d]", k)
                        .endsWith(want.get().getMessage());
            }
        }
    }

    /**
     * A member's retry goes out alone, where the worker's group has that one member, k[0]: the
     * body's text quoting 'k[0]' must still reach the coordinator as written, under the real task
     * name.
     */
    @Test
    void aRetrysBodyTextQuotingTheOnlyMemberOfItsSliceIsNotRewritten() throws Exception {
        AtomicInteger tries = new AtomicInteger();
        Shape shape = (where, i, t) -> t.retries(1).gpu(ctx -> {
            if (ctx.groupIndex() == 3) {
                tries.incrementAndGet();
                throw new IllegalStateException("still waiting for 'k[0]', try " + tries.get());
            }
            return body(where, ctx.groupIndex());
        });
        member("a", 0, new Graph("a", 4, 2, shape, null).graph);
        var b = member("b", 1, new Graph("b", 4, 2, shape, null).graph);
        Graph g = new Graph("a", 4, 2, shape, null);

        GraphRun run = ended(scheduler("a").submit(g.graph));

        assertThat(tries).hasValue(2);
        assertThat(b.received()).anyMatch(w -> w.size() == 1 && w.from() == 3);
        assertThat(run.error(g.group.get(3)).orElseThrow())
                .isInstanceOf(RemoteTaskException.class)
                .hasMessage("task 'k[3]' failed on member loopback/b (b): java.lang.IllegalStateException: "
                        + "still waiting for 'k[0]', try 2");
    }

    /**
     * The worker's own refusal (a resource it lacks) must name the real tasks of the slice, never
     * their places in the slice: the members of slice [2, 4) failed with "task 'k[0]' asks for
     * resource 'licence'" (fixed: each member fails with a RemoteTaskException naming it, whose
     * text names only members of its own slice).
     */
    @Test
    void aWorkersOwnRefusalNamesTheRealTask() throws Exception {
        Shape shape = (where, i, t) -> t.resource("licence", 1).gpu(ctx -> body(where, ctx.groupIndex()));
        member(cluster, "a", 0, x -> x.resource("licence", 1), new Graph("a", 4, 2, shape, null).graph);
        member("b", 1, new Graph("b", 4, 2, shape, null).graph);
        Graph g = new Graph("a", 4, 2, shape, null);

        GraphRun run = ended(scheduler("a").submit(g.graph, RunOptions.failureMode(FailureMode.CONTINUE)));

        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        for (int k = 0; k < 4; k++) {
            Throwable error = run.error(g.group.get(k)).orElseThrow();
            assertThat(error).isInstanceOf(RemoteTaskException.class).hasMessageStartingWith("task 'k[" + k + "]'");
            String text = error.getMessage();
            int from = k - k % 2;
            assertThat(text).as("k[%d]", k).contains("licence");
            for (int other = 0; other < 4; other++) {
                if (other != from && other != from + 1) {
                    assertThat(text).as("k[%d]", k).doesNotContain("'k[" + other + "]'");
                }
            }
        }
    }
}
