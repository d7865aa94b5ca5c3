package io.hts.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.retry.RetryConfig;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.NoDeviceException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.SchedulerBuilder;
import io.hts.engine.support.ClusterRuns;
import io.hts.engine.support.FakeGpuBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A demanding user's tests of GPU work across members, members' retries sent alone, resources
 * taken where a slice runs, fail-fast and cancels, over the in-memory {@link LoopbackCluster} with
 * simulated GPUs. Every test checks the core promises: the run ends, every task ends in one final
 * state, every shard counts once, nothing stays in the store.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ClusterGpuBreakTests {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final LoopbackCluster cluster = new LoopbackCluster();
    private final List<Scheduler> schedulers = new ArrayList<>();
    private final List<DeviceBackend> gpus = new ArrayList<>();
    private final Map<LoopbackCluster.Member, Gpus> gpuByMember = new ConcurrentHashMap<>();
    private final CountDownLatch release = new CountDownLatch(1);
    /** Body runs per member id and group index: "b/3". */
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    @AfterEach
    void close() {
        release.countDown();
        schedulers.forEach(Scheduler::shutdownNow);
        schedulers.forEach(Scheduler::close);
        gpus.forEach(DeviceBackend::close);
        cluster.close();
    }

    // ================================================================== set-up

    /** A GPU backend of {@code count} simulated GPUs, refusing tasks pinned to an ordinal it lacks (as MultiGpuBackend). */
    private static final class Gpus implements DeviceBackend {

        final FakeGpuBackend fake = new FakeGpuBackend(2);
        final int count;
        volatile boolean fallBack;

        Gpus(int count) {
            this.count = count;
        }

        @Override
        public Device device() {
            return Device.GPU;
        }

        @Override
        public String name() {
            return count + " fake GPUs";
        }

        @Override
        public DeviceStatus status() {
            return fake.status();
        }

        @Override
        public List<DeviceStatus> deviceStatuses() {
            return Collections.nCopies(count, fake.status());
        }

        @Override
        public void dispatch(DeviceTask task) {
            String reason = null;
            if (task.gpuOrdinal() >= count) {
                reason = "task '" + task.taskName() + "' is pinned to cuda:" + task.gpuOrdinal() + ", but HTS runs "
                        + name();
            } else if (fallBack) {
                reason = "task '" + task.taskName() + "': the GPU is busy";
            }
            if (reason != null) {
                if (!task.fallBackToCpu(reason)) {
                    task.fail(new IllegalStateException(reason));
                }
                return;
            }
            fake.dispatch(task);
        }

        void health(DeviceHealth health) {
            fake.setHealth(health, "set by the test: " + health);
        }

        @Override
        public void close() {
            fake.close();
        }
    }

    private Scheduler member(
            LoopbackCluster.Member engine, int gpuCount, Consumer<SchedulerBuilder> more, TaskGraph graph) {
        SchedulerBuilder b = Scheduler.builder().threads(2).cluster(engine);
        if (gpuCount > 0) {
            Gpus g = new Gpus(gpuCount);
            gpus.add(g);
            gpuByMember.put(engine, g);
            b.gpuBackend(g);
        }
        more.accept(b);
        Scheduler s = b.build();
        schedulers.add(s);
        s.register(graph);
        return s;
    }

    private Gpus gpuOf(LoopbackCluster.Member engine) {
        return gpuByMember.get(engine);
    }

    /** A graph: a seed (1000) and a distributed group "k" of {@code n} members made by {@code member}. */
    private static final class Graph {

        final TaskGraph graph = TaskGraph.named("g");
        final Task<Integer> seed = graph.task("seed").cpu(ctx -> 1_000);
        final TaskGroup<Integer> group;

        Graph(int n, int slice, BiFunction<Integer, TaskBuilder, Task<Integer>> member) {
            group = graph.group("k", n, (i, t) -> member.apply(i, t.after(seed)))
                    .distributed(slice);
        }
    }

    private void ran(String member, int index) {
        runs.computeIfAbsent(member + "/" + index, k -> new AtomicInteger()).incrementAndGet();
    }

    private static List<Integer> expected(int n) {
        return ClusterRuns.expected(n);
    }

    private static GraphRun ended(GraphRun run) throws InterruptedException {
        return ClusterRuns.ended(run, WAIT);
    }

    private void storeEmpties() {
        await().atMost(WAIT).until(() -> cluster.stored().isEmpty());
    }

    // ================================================================== GPU work across members

    /**
     * A group mixing GPU-only members with CPU-only ones goes to members with a GPU; the CPU-only
     * members' own retries must still apply there.
     */
    @Test
    void cpuOnlyMembersOfAMixedGroupKeepTheirRetries() throws Exception {
        Set<Integer> failedOnce = ConcurrentHashMap.newKeySet();
        BiFunction<Integer, TaskBuilder, Task<Integer>> body = (i, t) -> {
            if (i % 2 == 0) {
                return t.gpu(ctx -> 1_000 + ctx.groupIndex());
            }
            return t.retries(1).cpu(ctx -> {
                if (failedOnce.add(ctx.groupIndex())) {
                    throw new IllegalStateException("transient fault of " + ctx.groupIndex());
                }
                return 1_000 + ctx.groupIndex();
            });
        };
        Scheduler a = member(cluster.member("a"), 0, b -> {}, new Graph(4, 2, body).graph);
        member(cluster.member("b"), 1, b -> {}, new Graph(4, 2, body).graph);
        Graph g = new Graph(4, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(4));
        storeEmpties();
    }

    /** The same for a CPU-only member's time limit: its attempt on the GPU member must time out. */
    @Test
    void cpuOnlyMembersOfAMixedGroupKeepTheirTimeLimit() throws Exception {
        BiFunction<Integer, TaskBuilder, Task<Integer>> body = (i, t) -> i == 1
                ? t.timeout(Duration.ofMillis(300)).cpu(ctx -> {
                    release.await(30, TimeUnit.SECONDS);
                    return 1_000 + ctx.groupIndex();
                })
                : t.gpu(ctx -> 1_000 + ctx.groupIndex());
        Scheduler a = member(cluster.member("a"), 0, b -> {}, new Graph(2, 2, body).graph);
        member(cluster.member("b"), 1, b -> {}, new Graph(2, 2, body).graph);
        Graph g = new Graph(2, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.state(g.group.get(1))).isEqualTo(TaskState.FAILED);
        assertThat(run.error(g.group.get(1))).get().isInstanceOf(TimeoutException.class);
    }

    private BiFunction<Integer, TaskBuilder, Task<Integer>> gpuOnly(String member) {
        return (i, t) -> t.gpu(ctx -> {
            ran(member, ctx.groupIndex());
            return 1_000 + ctx.groupIndex();
        });
    }

    /** The only GPU member is lost while it holds the slices: the members fail naming the loss, the run ends. */
    @Test
    void theOnlyGpuMemberLostMidRunFailsItsMembersAndTheRunEnds() throws Exception {
        Scheduler a = member(cluster.member("a"), 0, b -> {}, new Graph(6, 2, gpuOnly("a")).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(6, 2, gpuOnly("b")).graph);
        member(cluster.member("c"), 0, x -> {}, new Graph(6, 2, gpuOnly("c")).graph);
        b.hold(w -> true);
        Graph g = new Graph(6, 2, gpuOnly("a"));

        GraphRun run = a.submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() == 3);
        b.lose();
        ended(run);

        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.error(g.group.get(0)))
                .get()
                .isInstanceOf(MemberLostException.class)
                .extracting(Throwable::getMessage)
                .asString()
                .contains("group 'k'", "b");
        assertThat(runs).isEmpty();
        storeEmpties();
    }

    /** Two GPU members, one lost while it holds its slices: the other runs them, every shard once. */
    @Test
    void aLostGpuMembersSlicesGoToTheOtherGpuMemberOnly() throws Exception {
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(12, 2, gpuOnly("a")).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(12, 2, gpuOnly("b")).graph);
        member(cluster.member("c"), 1, x -> {}, new Graph(12, 2, gpuOnly("c")).graph);
        member(cluster.member("d"), 0, x -> {}, new Graph(12, 2, gpuOnly("d")).graph);
        b.hold(w -> true);
        Graph g = new Graph(12, 2, gpuOnly("a"));

        GraphRun run = a.submit(g.graph);
        // every slice has gone out: b holds its own (how many depends on c's load as they go), c ran the rest
        await().atMost(WAIT).until(() -> b.holding() >= 1 && b.holding() * 2 + runs.size() == 12);
        b.lose();
        ended(run);

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(12));
        assertThat(runs.keySet()).allMatch(k -> k.startsWith("c/")).hasSize(12);
        assertThat(runs.values()).allMatch(n -> n.get() == 1);
        storeEmpties();
    }

    /** A member whose only GPU is DOWN must get no GPU-only slices while another member's GPU is UP. */
    @Test
    void aMemberWhoseGpuIsDownGetsNoGpuOnlySlices() throws Exception {
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(8, 2, gpuOnly("a")).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(8, 2, gpuOnly("b")).graph);
        member(cluster.member("c"), 1, x -> {}, new Graph(8, 2, gpuOnly("c")).graph);
        gpuOf(b).health(DeviceHealth.DOWN);
        Graph g = new Graph(8, 2, gpuOnly("a"));

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(8));
        assertThat(b.received()).isEmpty();
    }

    /** A DEGRADED GPU still runs: its member gets GPU-only slices, and they succeed. */
    @Test
    void aMemberWhoseGpuIsDegradedStillRunsGpuOnlySlices() throws Exception {
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 2, gpuOnly("a")).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(4, 2, gpuOnly("b")).graph);
        gpuOf(b).health(DeviceHealth.DEGRADED);
        Graph g = new Graph(4, 2, gpuOnly("a"));

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(4));
    }

    /** GPU-only members pinned to cuda:1 go to the member that has a second GPU, not to one with one GPU. */
    @Test
    void membersPinnedToAGpuOrdinalGoToAMemberThatHasIt() throws Exception {
        BiFunction<String, Integer, BiFunction<Integer, TaskBuilder, Task<Integer>>> pinned =
                (m, unused) -> (i, t) -> gpuOnly(m).apply(i, t.onGpu(1));
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(8, 2, pinned.apply("a", 0)).graph);
        member(cluster.member("b"), 1, x -> {}, new Graph(8, 2, pinned.apply("b", 0)).graph);
        member(cluster.member("c"), 2, x -> {}, new Graph(8, 2, pinned.apply("c", 0)).graph);
        Graph g = new Graph(8, 2, pinned.apply("a", 0));

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(8));
    }

    /** GPU-only members pinned to cuda:2 where no member has three GPUs fail naming the group and the GPU. */
    @Test
    void membersPinnedToAGpuNoMemberHasFailNamingIt() throws Exception {
        BiFunction<String, Integer, BiFunction<Integer, TaskBuilder, Task<Integer>>> pinned =
                (m, unused) -> (i, t) -> gpuOnly(m).apply(i, t.onGpu(2));
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(2, 2, pinned.apply("a", 0)).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 2, x -> {}, new Graph(2, 2, pinned.apply("b", 0)).graph);
        Graph g = new Graph(2, 2, pinned.apply("a", 0));

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.error(g.group.get(0)))
                .get()
                .isInstanceOf(NoDeviceException.class)
                .extracting(Throwable::getMessage)
                .asString()
                .contains("group 'k'", "cuda:2", "loopback/b");
        assertThat(b.received()).isEmpty();
    }

    /** A GPU-only member's time limit ends its remote attempt; the run ends, the late answer leaves nothing stored. */
    @Test
    void aGpuTimeLimitEndsARemoteGpuAttempt() throws Exception {
        // only k[1] is limited: k[0], in the same slice, waits for the slice's answer, so a limit of its own
        // would pass too (a member's time limit runs on the coordinator, for its whole slice)
        BiFunction<Integer, TaskBuilder, Task<Integer>> body =
                (i, t) -> (i == 1 ? t.timeout(Duration.ofMillis(200)) : t).gpu(ctx -> {
                    if (ctx.groupIndex() == 1) {
                        release.await(30, TimeUnit.SECONDS);
                    }
                    return 1_000 + ctx.groupIndex();
                });
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 2, body).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(4, 2, body).graph);
        Graph g = new Graph(4, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.state(g.group.get(1))).isEqualTo(TaskState.FAILED);
        assertThat(run.error(g.group.get(1)))
                .get()
                .isInstanceOf(TimeoutException.class)
                .extracting(Throwable::getMessage)
                .asString()
                .contains("k[1]");
        release.countDown();
        storeEmpties();
    }

    /** A worker's GPU hands members with both bodies to its CPU: they succeed there; GPU-only ones fail naming why. */
    @Test
    void gpuBodiesFallingBackToTheWorkersCpu() throws Exception {
        BiFunction<Integer, TaskBuilder, Task<Integer>> body = (i, t) -> i % 2 == 0
                ? t.bodies(ctx -> 1_000 + ctx.groupIndex(), ctx -> 1_000 + ctx.groupIndex())
                : t.gpu(ctx -> 1_000 + ctx.groupIndex());
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 4, body).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(4, 4, body).graph);
        gpuOf(b).fallBack = true;
        Graph g = new Graph(4, 4, body);

        GraphRun run = ended(
                a.submit(g.graph, io.hts.engine.run.RunOptions.failureMode(io.hts.engine.run.FailureMode.CONTINUE)));

        assertThat(run.result(g.group.get(0))).isEqualTo(1_000);
        assertThat(run.result(g.group.get(2))).isEqualTo(1_002);
        assertThat(run.state(g.group.get(1))).isEqualTo(TaskState.FAILED);
        assertThat(run.error(g.group.get(1)))
                .get()
                .isInstanceOf(RemoteTaskException.class)
                .extracting(Throwable::getMessage)
                .asString()
                .contains("k[1]", "loopback/b", "the GPU is busy");
        storeEmpties();
    }

    /**
     * The resource of a GPU-only group is taken where its slices run: a coordinator without a GPU
     * never runs them, so it need not declare the resource.
     */
    @Test
    void aCoordinatorWithoutAGpuNeedNotDeclareTheResourcesOfGpuOnlyMembers() throws Exception {
        BiFunction<Integer, TaskBuilder, Task<Integer>> body = (i, t) ->
                t.resource("licence", 1).resource(TaskBuilder.GPU_MEMORY, 1_000).gpu(ctx -> 1_000 + ctx.groupIndex());
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 2, body).graph);
        member(
                cluster.member("b"),
                1,
                x -> x.resource("licence", 1).resource(TaskBuilder.GPU_MEMORY, 1L << 20),
                new Graph(4, 2, body).graph);
        Graph g = new Graph(4, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(4));
    }

    /** A GPU member that lacks the members' resource fails them naming the resource and the member. */
    @Test
    void aGpuMemberWithoutTheResourceFailsTheMembersNamingIt() throws Exception {
        BiFunction<Integer, TaskBuilder, Task<Integer>> body =
                (i, t) -> t.resource("licence", 1).gpu(ctx -> 1_000 + ctx.groupIndex());
        Scheduler a = member(cluster.member("a"), 0, x -> x.resource("licence", 1), new Graph(2, 2, body).graph);
        member(cluster.member("b"), 1, x -> {}, new Graph(2, 2, body).graph);
        Graph g = new Graph(2, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.error(g.group.get(0)))
                .get()
                .extracting(Throwable::getMessage)
                .asString()
                .contains("licence", "k");
        storeEmpties();
    }

    // ================================================================== retries

    /** Every member fails once; retries with backoff are held by one GPU member that is then lost. */
    @Test
    void retriesWithBackoffMoveOffALostGpuMember() throws Exception {
        Set<Integer> failedOnce = ConcurrentHashMap.newKeySet();
        BiFunction<String, Integer, BiFunction<Integer, TaskBuilder, Task<Integer>>> body =
                (m, unused) -> (i, t) -> t.retries(2, Duration.ofMillis(20)).gpu(ctx -> {
                    if (failedOnce.add(ctx.groupIndex())) {
                        throw new IllegalStateException("transient fault of " + ctx.groupIndex());
                    }
                    ran(m, ctx.groupIndex());
                    return 1_000 + ctx.groupIndex();
                });
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(8, 4, body.apply("a", 0)).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(8, 4, body.apply("b", 0)).graph);
        member(cluster.member("c"), 1, x -> {}, new Graph(8, 4, body.apply("c", 0)).graph);
        b.hold(w -> w.size() == 1); // b holds the retries it gets
        Graph g = new Graph(8, 4, body.apply("a", 0));

        GraphRun run = a.submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() > 0 && failedOnce.size() == 8);
        b.lose();
        ended(run);

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(8));
        assertThat(runs.keySet()).noneMatch(k -> k.startsWith("a/") || k.startsWith("b/"));
        storeEmpties();
    }

    /** A retry on a result (retryOnResult) of a remote GPU member runs again until the result is accepted. */
    @Test
    void retryOnResultOfARemoteGpuMember() throws Exception {
        Map<Integer, AtomicInteger> tries = new ConcurrentHashMap<>();
        RetryConfig config = RetryConfig.<Object>custom()
                .maxAttempts(4)
                .waitDuration(Duration.ofMillis(1))
                .retryOnResult(r -> (Integer) r < 0)
                .build();
        BiFunction<Integer, TaskBuilder, Task<Integer>> body = (i, t) -> t.retry(config)
                .gpu(ctx -> tries.computeIfAbsent(ctx.groupIndex(), k -> new AtomicInteger())
                                        .incrementAndGet()
                                < 3
                        ? -1
                        : 1_000 + ctx.groupIndex());
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 2, body).graph);
        member(cluster.member("b"), 1, x -> {}, new Graph(4, 2, body).graph);
        Graph g = new Graph(4, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(4));
        assertThat(tries.values()).allMatch(n -> n.get() == 3);
    }

    /** Retries exhausted: the member fails with the remote error naming the task and the member. */
    @Test
    void retriesExhaustedFailNamingTheTaskAndTheMember() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        BiFunction<Integer, TaskBuilder, Task<Integer>> body =
                (i, t) -> t.retries(2).gpu(ctx -> {
                    if (ctx.groupIndex() == 3) {
                        calls.incrementAndGet();
                        throw new IllegalStateException("kernel 3 always fails");
                    }
                    return 1_000 + ctx.groupIndex();
                });
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 2, body).graph);
        member(cluster.member("b"), 1, x -> {}, new Graph(4, 2, body).graph);
        Graph g = new Graph(4, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(calls).hasValue(3);
        assertThat(run.error(g.group.get(3)))
                .get()
                .isInstanceOf(RemoteTaskException.class)
                .extracting(Throwable::getMessage)
                .asString()
                .contains("k[3]", "loopback/b", "kernel 3 always fails");
        for (int k = 0; k < 3; k++) {
            assertThat(run.result(g.group.get(k))).isEqualTo(1_000 + k);
        }
        storeEmpties();
    }

    /** A remote body's context names its own task (as on the coordinator), not its place in the slice. */
    @Test
    void aRemoteBodySeesItsOwnTaskName() throws Exception {
        Map<Integer, String> names = new ConcurrentHashMap<>();
        BiFunction<Integer, TaskBuilder, Task<Integer>> body = (i, t) -> t.bodies(
                ctx -> {
                    names.put(ctx.groupIndex(), ctx.taskName());
                    return 1_000 + ctx.groupIndex();
                },
                ctx -> {
                    names.put(ctx.groupIndex(), ctx.taskName());
                    return 1_000 + ctx.groupIndex();
                });
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(6, 2, body).graph);
        member(cluster.member("b"), 1, x -> {}, new Graph(6, 2, body).graph);
        Graph g = new Graph(6, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.results(g.group)).isEqualTo(expected(6));
        for (int k = 0; k < 6; k++) {
            assertThat(names.get(k)).isEqualTo("k[" + k + "]");
        }
    }

    /**
     * An error the worker's engine (or its GPU backend) raises names the member's own name, not its
     * index in the slice ({@code k[1]} for {@code k[3]} in slice [2, 4), as the worker's own group
     * names it).
     */
    @Test
    void aWorkersOwnErrorNamesTheTaskOfTheGroup() throws Exception {
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 2, gpuOnly("a")).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(4, 2, gpuOnly("b")).graph);
        gpuOf(b).fallBack = true; // GPU-only members fail there, with the worker's own refusal
        Graph g = new Graph(4, 2, gpuOnly("a"));

        GraphRun run = ended(
                a.submit(g.graph, io.hts.engine.run.RunOptions.failureMode(io.hts.engine.run.FailureMode.CONTINUE)));

        assertThat(run.error(g.group.get(3)))
                .get()
                .extracting(Throwable::getMessage)
                .asString()
                .contains("task 'k[3]'")
                .doesNotContain("'k[1]'");
    }

    /**
     * A body's own text quoting a member of its group by name reaches the coordinator as the user
     * wrote it, on the CPU and on the GPU: only the worker's own texts name the member of the group
     * in place of its place in the slice.
     */
    @Test
    void aBodysOwnTextQuotingAMemberIsNotRewritten() throws Exception {
        BiFunction<Integer, TaskBuilder, Task<Integer>> quoting = (i, t) -> {
            TaskBody<Integer> cpu = ctx -> {
                throw new IllegalStateException("waits for 'k[" + (ctx.groupIndex() - 2) + "]' on the CPU");
            };
            GpuBody<Integer> gpu = ctx -> {
                throw new IllegalStateException("waits for 'k[" + (ctx.groupIndex() - 2) + "]' on the GPU");
            };
            return i % 2 == 0 ? t.cpu(cpu) : t.gpu(gpu);
        };
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 2, quoting).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(4, 2, quoting).graph);
        Graph g = new Graph(4, 2, quoting);

        GraphRun run = ended(
                a.submit(g.graph, io.hts.engine.run.RunOptions.failureMode(io.hts.engine.run.FailureMode.CONTINUE)));

        assertThat(b.received()).isNotEmpty();
        assertThat(run.error(g.group.get(2)).orElseThrow()).hasMessageContaining("waits for 'k[0]' on the CPU");
        assertThat(run.error(g.group.get(3)).orElseThrow()).hasMessageContaining("waits for 'k[1]' on the GPU");
        storeEmpties();
    }

    /**
     * The coordinator's scheduler is shut down while a run waits to send its GPU-only slices: it is
     * published DOWN (others send it no slices), but its own running runs still finish, their
     * slices on its own GPU, the only one in the cluster.
     */
    @Test
    void aCoordinatorShutDownStillRunsTheSlicesOfItsRunningRunsOnItsOwnGpu() throws Exception {
        CountDownLatch seedGate = new CountDownLatch(1);
        TaskGraph graph = TaskGraph.named("gated");
        Task<Integer> seed = graph.task("seed").cpu(ctx -> {
            seedGate.await();
            return 1_000;
        });
        TaskGroup<Integer> group = graph.group(
                        "k", 4, (i, t) -> t.after(seed).gpu(ctx -> ctx.input(seed) + ctx.groupIndex()))
                .distributed(2);
        LoopbackCluster.Member coordinator = cluster.member("a");
        Scheduler a = member(coordinator, 1, x -> {}, graph);
        member(cluster.member("c"), 0, x -> {}, TaskGraph.named("other"));

        GraphRun run = a.submit(graph);
        a.shutdown();
        assertThat(coordinator.localMember().health()).isEqualTo(DeviceHealth.DOWN);
        seedGate.countDown();
        ended(run);

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(group)).isEqualTo(expected(4));
    }

    /** A cancel during a retry's backoff ends the member CANCELLED at once; the others go on. */
    @Test
    void aCancelDuringARetrysBackoff() throws Exception {
        Set<Integer> failedOnce = ConcurrentHashMap.newKeySet();
        BiFunction<Integer, TaskBuilder, Task<Integer>> body =
                (i, t) -> t.retries(1, Duration.ofSeconds(30)).gpu(ctx -> {
                    if (ctx.groupIndex() == 0 && failedOnce.add(0)) {
                        throw new IllegalStateException("transient");
                    }
                    return 1_000 + ctx.groupIndex();
                });
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(4, 2, body).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(4, 2, body).graph);
        Graph g = new Graph(4, 2, body);

        GraphRun run = a.submit(g.graph);
        await().atMost(WAIT).until(() -> run.state(g.group.get(0)) == TaskState.RETRYING);
        run.cancel(g.group.get(0));
        ended(run);

        assertThat(run.state(g.group.get(0))).isEqualTo(TaskState.CANCELLED);
        for (int k = 1; k < 4; k++) {
            assertThat(run.result(g.group.get(k))).isEqualTo(1_000 + k);
        }
        assertThat(b.received()).noneMatch(w -> w.size() == 1);
        storeEmpties();
    }

    /** A cancel while a retry runs on another member ends it at once; the late answer is dropped. */
    @Test
    void aCancelWhileARetryRunsRemotely() throws Exception {
        Set<Integer> failedOnce = ConcurrentHashMap.newKeySet();
        BiFunction<Integer, TaskBuilder, Task<Integer>> body =
                (i, t) -> t.retries(1).gpu(ctx -> {
                    if (ctx.groupIndex() == 0 && failedOnce.add(0)) {
                        throw new IllegalStateException("transient");
                    }
                    return List.of(1_000 + ctx.groupIndex()).get(0);
                });
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(2, 2, body).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(2, 2, body).graph);
        b.hold(w -> w.size() == 1);
        Graph g = new Graph(2, 2, body);

        GraphRun run = a.submit(g.graph);
        await().atMost(WAIT).until(() -> b.holding() == 1);
        assertThat(run.state(g.group.get(0))).isEqualTo(TaskState.RUNNING);
        run.cancel(g.group.get(0));
        await().atMost(WAIT).until(() -> run.state(g.group.get(0)) == TaskState.CANCELLED);
        b.release();
        ended(run);

        assertThat(run.state(g.group.get(0))).isEqualTo(TaskState.CANCELLED);
        assertThat(run.result(g.group.get(1))).isEqualTo(1_001);
        storeEmpties();
    }

    /** Many members retry at once across two GPU members: every shard counts once. */
    @Test
    void manyRetriesAtOnce() throws Exception {
        Set<Integer> failedOnce = ConcurrentHashMap.newKeySet();
        AtomicInteger succeeded = new AtomicInteger();
        BiFunction<Integer, TaskBuilder, Task<Integer>> body =
                (i, t) -> t.retries(3).gpu(ctx -> {
                    if (failedOnce.add(ctx.groupIndex())) {
                        throw new IllegalStateException("transient " + ctx.groupIndex());
                    }
                    succeeded.incrementAndGet();
                    return 1_000 + ctx.groupIndex();
                });
        Scheduler a = member(cluster.member("a"), 1, x -> {}, new Graph(300, 10, body).graph);
        member(cluster.member("b"), 1, x -> {}, new Graph(300, 10, body).graph);
        member(cluster.member("c"), 1, x -> {}, new Graph(300, 10, body).graph);
        Graph g = new Graph(300, 10, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.group)).isEqualTo(expected(300));
        assertThat(succeeded).hasValue(300);
        storeEmpties();
    }

    // ================================================================== fail fast, cancels

    /** A run failing fast cancels the slices held on another GPU member, and ends. */
    @Test
    void failFastCancelsSlicesInFlightOnOtherMembers() throws Exception {
        BiFunction<Integer, TaskBuilder, Task<Integer>> body = (i, t) -> t.gpu(ctx -> {
            if (ctx.groupIndex() == 0) {
                throw new IllegalStateException("kernel 0 fails");
            }
            return 1_000 + ctx.groupIndex();
        });
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(6, 2, body).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(6, 2, body).graph);
        LoopbackCluster.Member c = cluster.member("c");
        member(c, 1, x -> {}, new Graph(6, 2, body).graph);
        c.hold(w -> w.from() != 0);
        b.hold(w -> w.from() != 0);
        Graph g = new Graph(6, 2, body);

        GraphRun run = ended(a.submit(g.graph));

        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.state(g.group.get(0))).isEqualTo(TaskState.FAILED);
        for (int k = 2; k < 6; k++) {
            assertThat(run.state(g.group.get(k))).isEqualTo(TaskState.CANCELLED);
        }
        b.release();
        c.release();
        storeEmpties();
    }

    /** run.cancel(group) of GPU-only members running on another member cancels the slice there. */
    @Test
    void cancellingTheGroupCancelsItsSliceOnTheGpuMember() throws Exception {
        CountDownLatch started = new CountDownLatch(2);
        AtomicInteger sawCancel = new AtomicInteger();
        BiFunction<Integer, TaskBuilder, Task<Integer>> body = (i, t) -> t.gpu(ctx -> {
            started.countDown();
            // a GPU body is not interrupted: it sees the cancel through its context
            while (!release.await(5, TimeUnit.MILLISECONDS)) {
                if (ctx.isCancelled()) {
                    sawCancel.incrementAndGet();
                    throw new IllegalStateException("cancelled");
                }
            }
            return 1_000 + ctx.groupIndex();
        });
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(2, 2, body).graph);
        member(cluster.member("b"), 1, x -> {}, new Graph(2, 2, body).graph);
        Graph g = new Graph(2, 2, body);

        GraphRun run = a.submit(g.graph);
        assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
        run.cancel(g.group);
        ended(run);

        assertThat(run.state(g.group.get(0))).isEqualTo(TaskState.CANCELLED);
        assertThat(run.state(g.group.get(1))).isEqualTo(TaskState.CANCELLED);
        await().atMost(WAIT).until(() -> sawCancel.get() == 2);
        storeEmpties();
    }

    /** A GPU-only member cancelled before its slice leaves is skipped there, and not run. */
    @Test
    void aMemberCancelledBeforeItsSliceLeavesIsSkippedOnTheGpuMember() throws Exception {
        CountDownLatch seedGate = new CountDownLatch(1);
        BiFunction<String, Integer, BiFunction<Integer, TaskBuilder, Task<Integer>>> body = (m, unused) -> gpuOnly(m);
        Scheduler a = member(cluster.member("a"), 0, x -> {}, new Graph(3, 3, body.apply("a", 0)).graph);
        LoopbackCluster.Member b = cluster.member("b");
        member(b, 1, x -> {}, new Graph(3, 3, body.apply("b", 0)).graph);
        Graph g = new Graph(3, 3, body.apply("a", 0));
        b.hold(w -> true);

        GraphRun run = a.submit(g.graph);
        // the slice leaves once the seed is done: all three are READY together, so cancel one as it is held
        await().atMost(WAIT).until(() -> b.holding() == 1);
        run.cancel(g.group.get(1));
        b.release();
        ended(run);

        assertThat(run.state(g.group.get(1))).isEqualTo(TaskState.CANCELLED);
        assertThat(run.result(g.group.get(0))).isEqualTo(1_000);
        assertThat(run.result(g.group.get(2))).isEqualTo(1_002);
        storeEmpties();
    }
}
