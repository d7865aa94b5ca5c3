package io.hts.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.RemoteTaskException;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.ClusterRuns;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A demanding user's tests of members shut down on embedded Hazelcast members (127.0.0.1, statuses
 * published only every ten minutes, so only the at-once publication of DOWN can tell the others),
 * and of body texts travelling back through Hazelcast.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HazelcastHealthBreakTests {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final HazelcastClusterOptions RARELY = new HazelcastClusterOptions(
            "hts-slices", "hts-members", "hts-payloads", Duration.ofMinutes(10), Duration.ofMinutes(10));

    private final List<HazelcastInstance> members = new CopyOnWriteArrayList<>();
    private final List<HazelcastClusterEngine> engines = new ArrayList<>();
    private final List<Scheduler> schedulers = new ArrayList<>();
    private final CountDownLatch gate = new CountDownLatch(1);
    /** Bodies started per member (0 = a, 1 = b). */
    private final List<AtomicInteger> started = List.of(new AtomicInteger(), new AtomicInteger());
    /** Bodies run per member and index: "1/3". */
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    @AfterEach
    void shutDown() {
        gate.countDown();
        schedulers.forEach(Scheduler::shutdownNow);
        engines.forEach(HazelcastClusterEngine::close);
        schedulers.forEach(Scheduler::close);
        members.forEach(HazelcastInstance::shutdown);
    }

    /** Two members; member 1's executor runs {@code workerSlices} slices at once. */
    private void startTwo(int workerSlices) {
        List<Integer> ports = LoopbackConfig.freePorts(2);
        String cluster = "hts-health-break-" + ports.get(0);
        List<HazelcastInstance> started = new CopyOnWriteArrayList<>();
        ports.parallelStream().forEach(p -> {
            Config c = LoopbackConfig.member(cluster, p, ports);
            if (p.equals(ports.get(1))) {
                c.getExecutorConfig("hts-slices").setPoolSize(workerSlices);
            }
            started.add(Hazelcast.newHazelcastInstance(c));
        });
        for (int p : ports) {
            members.add(started.stream()
                    .filter(m -> m.getCluster().getLocalMember().getAddress().getPort() == p)
                    .findFirst()
                    .orElseThrow());
        }
    }

    /** A graph: a seed, and a distributed group "k" of {@code n} in slices of {@code slice}. */
    private static final class Graph {
        final TaskGraph graph = TaskGraph.named("g");
        final Task<Integer> seed;
        final TaskGroup<Integer> group;

        Graph(int n, int slice, CountDownLatch seedGate, Body body) {
            seed = graph.task("seed").cpu(ctx -> {
                if (seedGate != null) {
                    seedGate.await();
                }
                return 1_000;
            });
            group = graph.group("k", n, (i, t) -> t.after(seed).cpu(ctx -> body.run(ctx.groupIndex())))
                    .distributed(slice);
        }
    }

    private interface Body {
        Integer run(int index) throws Exception;
    }

    /** Member {@code k}'s body: counts, waits for the gate when {@code gated}, returns 1000 + index. */
    private Body counting(int k, boolean gated) {
        return i -> {
            started.get(k).incrementAndGet();
            if (gated) {
                gate.await();
            }
            runs.computeIfAbsent(k + "/" + i, x -> new AtomicInteger()).incrementAndGet();
            return 1_000 + i;
        };
    }

    private void engines(Graph onA, Graph onB) {
        List<Graph> graphs = List.of(onA, onB);
        for (int k = 0; k < 2; k++) {
            HazelcastClusterEngine engine = new HazelcastClusterEngine(members.get(k), RARELY);
            Scheduler s = Scheduler.builder().threads(2).cluster(engine).build();
            s.register(graphs.get(k).graph);
            engines.add(engine);
            schedulers.add(s);
        }
        await().atMost(WAIT)
                .until(() -> engines.get(0).members().size() == 2
                        && engines.get(1).members().size() == 2);
    }

    private DeviceHealth healthOfBSeenByA() {
        String b = engines.get(1).localMember().id();
        return engines.get(0).members().stream()
                .filter(m -> m.id().equals(b))
                .map(ClusterMember::health)
                .findFirst()
                .orElseThrow();
    }

    private static List<Integer> expected(int n) {
        return ClusterRuns.expected(n);
    }

    private static GraphRun ended(GraphRun run) throws InterruptedException {
        return ClusterRuns.ended(run, WAIT);
    }

    private int ranOn(int member) {
        int n = 0;
        for (var e : runs.entrySet()) {
            if (e.getKey().startsWith(member + "/")) {
                n += e.getValue().get();
            }
        }
        return n;
    }

    /**
     * Worker b shut down while a's slices run on it (its bodies wait): b is seen DOWN at once
     * (statuses every ten minutes), the slices it runs finish, the run succeeds with every shard
     * once, and a second run sends b nothing.
     */
    @Test
    void aWorkerShutDownWhileItRunsSlicesFinishesThemAndGetsNoMore() throws Exception {
        startTwo(16);
        Graph onA = new Graph(24, 2, null, counting(0, false));
        engines(onA, new Graph(24, 2, null, counting(1, true)));

        GraphRun run = schedulers.get(0).submit(onA.graph);
        await().atMost(WAIT).until(() -> started.get(1).get() > 0);
        schedulers.get(1).shutdown();
        await().atMost(WAIT).until(() -> healthOfBSeenByA() == DeviceHealth.DOWN);
        gate.countDown();

        ended(run);
        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(onA.group)).isEqualTo(expected(24));
        assertThat(schedulers.get(1).awaitTermination(WAIT)).isTrue();
        int onB = ranOn(1);
        GraphRun second = ended(schedulers.get(0).submit(onA.graph));
        assertThat(second.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(ranOn(1)).isEqualTo(onB);
    }

    /**
     * Worker b's executor runs one slice at a time, so a's other slices queue in Hazelcast's
     * executor there; b is shut down meanwhile: the queued slices are refused (UNAVAILABLE) and must
     * run on a, the coordinator, which is UP. The run succeeds.
     */
    @Test
    void slicesQueuedOnAWorkerShutDownGoBackToTheCoordinator() throws Exception {
        startTwo(1);
        Graph onA = new Graph(24, 2, null, counting(0, false));
        engines(onA, new Graph(24, 2, null, counting(1, true)));

        GraphRun run = schedulers.get(0).submit(onA.graph);
        await().atMost(WAIT).until(() -> started.get(1).get() > 0);
        schedulers.get(1).shutdown();
        await().atMost(WAIT).until(() -> healthOfBSeenByA() == DeviceHealth.DOWN);
        gate.countDown();

        ended(run);
        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(onA.group)).isEqualTo(expected(24));
    }

    /**
     * As above, but the coordinator a is shut down too (its own run must still finish, on a: the
     * only member left). Was (fixed): the slices b refused went to a through Hazelcast, where a's
     * own server refused them as well, and they failed with MemberLostException "no member left".
     */
    @Test
    void slicesQueuedOnAWorkerShutDownRunOnTheCoordinatorShutDownToo() throws Exception {
        startTwo(1);
        Graph onA = new Graph(24, 2, null, counting(0, false));
        engines(onA, new Graph(24, 2, null, counting(1, true)));

        GraphRun run = schedulers.get(0).submit(onA.graph);
        await().atMost(WAIT).until(() -> started.get(1).get() > 0);
        schedulers.get(0).shutdown();
        schedulers.get(1).shutdown();
        await().atMost(WAIT).until(() -> healthOfBSeenByA() == DeviceHealth.DOWN);
        gate.countDown();

        ended(run);
        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(onA.group)).isEqualTo(expected(24));
        assertThat(schedulers.get(0).awaitTermination(WAIT)).isTrue();
    }

    /**
     * Worker b's shutdownNow() while a's slices run there: b leaving must not fail or cancel a's
     * run; its slices go to a. Was (fixed): they failed with RemoteTaskException
     * "TaskCancelledException: run N of graph 'g' was cancelled" (b's run id).
     */
    @Test
    void aWorkersShutdownNowDoesNotFailTheCoordinatorsRun() throws Exception {
        startTwo(16);
        Graph onA = new Graph(24, 2, null, counting(0, false));
        engines(onA, new Graph(24, 2, null, counting(1, true)));

        GraphRun run = schedulers.get(0).submit(onA.graph);
        await().atMost(WAIT).until(() -> started.get(1).get() > 0);
        schedulers.get(1).shutdownNow();

        ended(run);
        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(onA.group)).isEqualTo(expected(24));
    }

    /**
     * With statuses every 20 ms, a member whose scheduler shut down and terminated keeps being
     * published DOWN by its regular publications (a later status must not say UP again), and gets
     * no slices.
     */
    @Test
    void aTerminatedMemberStaysDownThroughItsRegularStatuses() throws Exception {
        startTwo(16);
        HazelcastClusterOptions often = new HazelcastClusterOptions(
                "hts-slices", "hts-members", "hts-payloads", Duration.ofMinutes(10), Duration.ofMillis(20));
        Graph onA = new Graph(24, 2, null, counting(0, false));
        List<Graph> graphs = List.of(onA, new Graph(24, 2, null, counting(1, false)));
        for (int k = 0; k < 2; k++) {
            HazelcastClusterEngine engine = new HazelcastClusterEngine(members.get(k), often);
            Scheduler s = Scheduler.builder().threads(2).cluster(engine).build();
            s.register(graphs.get(k).graph);
            engines.add(engine);
            schedulers.add(s);
        }
        await().atMost(WAIT).until(() -> engines.get(0).members().size() == 2);

        schedulers.get(1).close();
        await().atMost(WAIT).until(() -> healthOfBSeenByA() == DeviceHealth.DOWN);
        await().during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(3))
                .until(() -> healthOfBSeenByA() == DeviceHealth.DOWN
                        && engines.get(1).localMember().health() == DeviceHealth.DOWN);
        GraphRun run = ended(schedulers.get(0).submit(onA.graph));

        assertThat(run.status()).as("%s", run.failures()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.results(onA.group)).isEqualTo(expected(24));
        assertThat(started.get(1).get()).isZero();
    }

    /**
     * Bodies failing on b with texts of every kind (null, multi-line, quoting other members, very
     * long, non-ASCII): each reaches a as a RemoteTaskException naming the real task and the text
     * exactly as written.
     */
    @Test
    void bodyTextsTravelThroughHazelcastExactlyAsWritten() throws Exception {
        startTwo(16);
        String longText = "'k[1]' ".repeat(20_000); // 140 000 chars: past writeUTF's 64 KiB
        Map<Integer, String> texts = new ConcurrentHashMap<>();
        Body failing = i -> {
            String text = switch (i % 5) {
                case 0 -> null;
                case 1 -> "line one 'k[0]'\nline two 'k[1]'\r\n\ttask 'k[1]' was cancelled";
                case 2 -> longText;
                case 3 -> "non-ASCII: \u00e9\u4e2d\ud83d\ude00 \u0000 end 'k[0]'";
                default -> "waits for 'k[" + (i - 1) + "]'";
            };
            texts.put(i, text == null ? "" : text);
            throw new IllegalStateException(text);
        };
        Graph onA = new Graph(20, 2, null, counting(0, false));
        engines(onA, new Graph(20, 2, null, failing));

        GraphRun run = ended(schedulers.get(0).submit(onA.graph, RunOptions.failureMode(FailureMode.CONTINUE)));

        assertThat(texts).as("some slices ran on b").isNotEmpty();
        String b = engines.get(1).localMember().toString();
        for (int k = 0; k < 20; k++) {
            if (!texts.containsKey(k)) {
                assertThat(run.result(onA.group.get(k))).isEqualTo(1_000 + k);
                continue;
            }
            String text = texts.get(k);
            Throwable ex = run.error(onA.group.get(k)).orElseThrow();
            assertThat(ex).as("k[%d]", k).isInstanceOf(RemoteTaskException.class);
            assertThat(ex.getMessage())
                    .as("k[%d]", k)
                    .isEqualTo("task 'k[" + k + "]' failed on " + b + ": java.lang.IllegalStateException"
                            + (text.isEmpty() ? "" : ": " + text));
        }
    }
}
