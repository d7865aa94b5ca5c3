package io.hts.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.NoDeviceException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * GPU work across members, through the public API over the in-memory {@link LoopbackCluster}: a
 * distributed group whose members have only GPU bodies runs on members with GPUs (the coordinator
 * needs none), one with both bodies runs anywhere (a worker's policy picks its GPU), none with a
 * GPU fails the members naming the group, and resources are taken where a slice runs.
 */
class ClusterGpuTests {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final LoopbackCluster cluster = new LoopbackCluster();
    private final List<Scheduler> schedulers = new ArrayList<>();
    private final List<FakeGpuBackend> gpus = new ArrayList<>();
    private final Map<String, LoopbackCluster.Member> engines = new HashMap<>();
    /** The members (by their scheduler's GPU) whose GPU ran a body, with the group index it saw. */
    private final Set<String> ranOnGpu = ConcurrentHashMap.newKeySet();

    @AfterEach
    void close() {
        release.countDown();
        schedulers.forEach(Scheduler::shutdownNow);
        schedulers.forEach(Scheduler::close);
        gpus.forEach(FakeGpuBackend::close);
        cluster.close();
    }

    /** A member, with a fake GPU when {@code gpu}, serving the graph {@code graph} makes. */
    private Scheduler member(String id, boolean gpu, GraphFactory graph, String resource, long amount) {
        LoopbackCluster.Member engine = cluster.member(id);
        engines.put(id, engine);
        var builder = Scheduler.builder().threads(2).cluster(engine);
        if (gpu) {
            FakeGpuBackend backend = new FakeGpuBackend(2);
            gpus.add(backend);
            builder.gpuBackend(backend);
        }
        if (resource != null) {
            builder.resource(resource, amount);
        }
        Scheduler s = builder.build();
        schedulers.add(s);
        s.register(graph.make(id).graph);
        return s;
    }

    private Scheduler member(String id, boolean gpu, GraphFactory graph) {
        return member(id, gpu, graph, null, 0);
    }

    @FunctionalInterface
    private interface GraphFactory {
        Kernels make(String member);
    }

    /** A seed and a distributed group of {@code n} kernels reading it, in slices of {@code slice}. */
    private final class Kernels {

        final TaskGraph graph = TaskGraph.named("kernels");
        final Task<Integer> seed = graph.task("seed").cpu(ctx -> 1_000);
        TaskGroup<Integer> kernels;
        /** With a resource: a task of the same run that holds one unit of it until {@link #release}. */
        final @Nullable Task<Integer> holder;

        Kernels(String member, int n, int slice, boolean cpuToo, @Nullable String resource) {
            holder = resource == null
                    ? null
                    : graph.task("holder").resource(resource, 1).cpu(ctx -> {
                        release.await(20, TimeUnit.SECONDS);
                        return 0;
                    });
            kernels = graph.group("kernel", n, (i, t) -> {
                        t.after(seed);
                        if (resource != null) {
                            t.resource(resource, 1);
                        }
                        if (!cpuToo) {
                            return t.gpu(ctx -> {
                                ranOnGpu.add(member);
                                return ctx.input(seed) + ctx.groupIndex();
                            });
                        }
                        return t.bodies(ctx -> ctx.input(seed) + ctx.groupIndex(), ctx -> {
                            ranOnGpu.add(member);
                            return ctx.input(seed) + ctx.groupIndex();
                        });
                    })
                    .distributed(slice);
        }
    }

    private final CountDownLatch release = new CountDownLatch(1);

    private static List<Integer> expected(int n) {
        return IntStream.range(0, n).map(i -> 1_000 + i).boxed().toList();
    }

    @Test
    void gpuOnlyMembersRunOnTheMembersWithAGpuWhenTheCoordinatorHasNone() {
        GraphFactory graph = m -> new Kernels(m, 12, 3, false, null);
        Scheduler coordinator = member("a", false, graph);
        member("b", true, graph);
        member("c", false, graph);
        Kernels g = graph.make("a");

        coordinator.validate(g.graph); // no GPU here, but the cluster has one
        GraphRun run = coordinator.execute(g.graph);

        assertThat(run.results(g.kernels)).isEqualTo(expected(12));
        assertThat(ranOnGpu).containsExactly("b");
        assertThat(engines.get("c").received()).isEmpty();
        assertThat(engines.get("b").received()).hasSize(4);
    }

    @Test
    void aCoordinatorWithTheOnlyGpuRunsTheGpuOnlySlicesOnItsOwnGpu() {
        GraphFactory graph = m -> new Kernels(m, 8, 2, false, null);
        Scheduler coordinator = member("a", true, graph);
        member("b", false, graph);
        Kernels g = graph.make("a");

        GraphRun run = coordinator.execute(g.graph);

        assertThat(run.results(g.kernels)).isEqualTo(expected(8));
        assertThat(ranOnGpu).containsExactly("a");
        assertThat(engines.get("b").received()).isEmpty();
    }

    @Test
    void aRetryOfAGpuOnlyMemberGoesToAMemberWithAGpuAlone() {
        Set<Integer> failedOnce = ConcurrentHashMap.newKeySet();
        GraphFactory graph = m -> {
            Kernels k = new Kernels(m, 0, 1, false, null);
            k.kernels = k.graph
                    .group(
                            "retried",
                            6,
                            (i, t) -> t.after(k.seed).retries(1).gpu(ctx -> {
                                if (failedOnce.add(ctx.groupIndex())) {
                                    throw new IllegalStateException("transient fault of kernel " + ctx.groupIndex());
                                }
                                ranOnGpu.add(m);
                                return ctx.input(k.seed) + ctx.groupIndex();
                            }))
                    .distributed(3);
            return k;
        };
        Scheduler coordinator = member("a", false, graph);
        member("b", true, graph);
        Kernels g = graph.make("a");

        GraphRun run = coordinator.execute(g.graph);

        assertThat(run.results(g.kernels)).isEqualTo(expected(6));
        assertThat(failedOnce).hasSize(6);
        // two slices of three, then each member's retry alone, all on b: a has no GPU
        List<SliceWork> onB = engines.get("b").received().stream()
                .filter(w -> w.group().equals("retried"))
                .toList();
        assertThat(onB.stream().filter(w -> w.size() == 3)).hasSize(2);
        assertThat(onB.stream().filter(w -> w.size() == 1).map(SliceWork::from))
                .containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5);
    }

    @Test
    void gpuOnlyMembersFailNamingTheGroupWhenNoMemberHasAGpu() throws Exception {
        GraphFactory graph = m -> new Kernels(m, 4, 2, false, null);
        Scheduler coordinator = member("a", false, graph);
        member("b", false, graph);
        Kernels g = graph.make("a");

        GraphRun run = coordinator.submit(g.graph);

        assertThatThrownBy(() -> run.await(WAIT)).isInstanceOf(GraphRunException.class);
        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.states().values()).allMatch(TaskState::isTerminal);
        // the first kernel fails, the run fails fast: the others fail alike or are cancelled
        assertThat(run.state(g.kernels.get(0))).isEqualTo(TaskState.FAILED);
        assertThat(run.error(g.kernels.get(0)))
                .get()
                .isInstanceOf(NoDeviceException.class)
                .extracting(Throwable::getMessage)
                .asString()
                .contains("group 'kernel'", "no member of the cluster has a GPU", "loopback/b");
        assertThat(engines.get("b").received()).isEmpty();
    }

    @Test
    void membersWithBothBodiesRunAnywhereAndAWorkersPolicyMayPickItsGpu() {
        GraphFactory graph = m -> new Kernels(m, 16, 2, true, null);
        Scheduler coordinator = member("a", false, graph);
        member("b", true, graph);
        Kernels g = graph.make("a");

        GraphRun run = coordinator.execute(g.graph);

        assertThat(run.results(g.kernels)).isEqualTo(expected(16));
        assertThat(ranOnGpu).doesNotContain("a"); // the coordinator has no GPU: CPU bodies there
        assertThat(engines.get("b").received()).isNotEmpty();
    }

    @Test
    void aRemoteSliceTakesItsResourcesOnTheMemberThatRunsIt() throws Exception {
        GraphFactory graph = m -> new Kernels(m, 4, 2, false, "licence");
        Scheduler coordinator = member("a", false, graph, "licence", 1);
        member("b", true, graph, "licence", 2);
        Kernels g = graph.make("a");

        // the coordinator's only licence is held by a task of the same run until the kernels are done
        GraphRun run = coordinator.submit(g.graph);
        try {
            await().atMost(WAIT).until(() -> run.state(g.holder) == TaskState.RUNNING);
            await().atMost(WAIT)
                    .until(() -> g.kernels.members().stream().allMatch(k -> run.state(k) == TaskState.SUCCEEDED));
        } finally {
            release.countDown();
        }

        assertThat(run.await(WAIT).status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(g.kernels)).isEqualTo(expected(4));
    }

    @Test
    void aSliceNeedingAResourceItsMemberDoesNotDeclareFailsNamingIt() throws Exception {
        release.countDown(); // the holder does not wait here
        Scheduler coordinator = member("a", false, m -> new Kernels(m, 2, 2, false, "licence"), "licence", 1);
        // b registers the same graph but declares no licence: its slice cannot run there
        Scheduler b = Scheduler.builder()
                .threads(2)
                .gpuBackend(newGpu())
                .cluster(cluster.member("b"))
                .build();
        schedulers.add(b);
        b.register(new Kernels("b", 2, 2, false, "licence").graph);
        Kernels g = new Kernels("a", 2, 2, false, "licence");

        GraphRun run = coordinator.submit(g.graph);

        assertThatThrownBy(() -> run.await(WAIT)).isInstanceOf(GraphRunException.class);
        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.error(g.kernels.get(0)))
                .get()
                .asString()
                .contains("resource 'licence'", "which the scheduler does not have");
    }

    private FakeGpuBackend newGpu() {
        FakeGpuBackend backend = new FakeGpuBackend(2);
        gpus.add(backend);
        return backend;
    }
}
