package io.hts.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.hazelcast.core.HazelcastInstance;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.GraphRefusedException;
import io.hts.engine.cluster.MembershipEvent;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Three embedded Hazelcast members in this JVM on 127.0.0.1, each with its own scheduler and its own
 * copy of the graphs: a sweep equals a single-JVM run, refusals name graph and member, a cancel
 * reaches the worker, and a member shut down mid-run (the last test) leaves the run complete with
 * every shard counted once.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HazelcastClusterTests {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String[] NAMES = {"a", "b", "c"};

    private static final List<Node> nodes = new CopyOnWriteArrayList<>();
    private static final Map<String, AtomicInteger> shardsRun = new ConcurrentHashMap<>();
    /** Bodies of graph 'blocking' on member c wait here until it is shut down (or 30 s). */
    private static final CountDownLatch never = new CountDownLatch(1);

    private static final CountDownLatch cEntered = new CountDownLatch(1);
    private static final CountDownLatch bEntered = new CountDownLatch(1);

    record Node(
            String name, HazelcastInstance hz, HazelcastClusterEngine engine, Scheduler scheduler, SweepGraph sweep) {}

    @BeforeAll
    static void startThreeMembers() {
        List<HazelcastInstance> instances = LoopbackConfig.startMembers("hts-test", 3);
        for (int k = 0; k < 3; k++) {
            String name = NAMES[k];
            HazelcastInstance hz = instances.get(k);
            HazelcastClusterEngine engine = new HazelcastClusterEngine(hz);
            Scheduler scheduler = Scheduler.builder().threads(2).cluster(engine).build();
            shardsRun.put(name, new AtomicInteger());
            SweepGraph sweep =
                    new SweepGraph("sweep", 300, 10, i -> shardsRun.get(name).incrementAndGet());
            scheduler.register(sweep.graph);
            scheduler.register(new SweepGraph("versioned", name.equals("a") ? 8 : 9, 1, i -> {}).graph);
            if (name.equals("a")) {
                scheduler.register(new SweepGraph("unknown", 8, 1, i -> {}).graph);
            }
            scheduler.register(new SweepGraph("blocking", 12, 2, i -> block(name)).graph);
            scheduler.register(new SweepGraph("slow", 4, 1, i -> slow(name)).graph);
            nodes.add(new Node(name, hz, engine, scheduler, sweep));
        }
        await().atMost(WAIT)
                .until(() -> nodes.stream().allMatch(n -> n.engine.members().size() == 3));
    }

    private static void block(String member) {
        if (member.equals("c")) {
            cEntered.countDown();
            awaitQuietly(never);
        }
    }

    private static void slow(String member) {
        if (member.equals("b")) {
            bEntered.countDown();
            awaitQuietly(never);
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }

    @AfterAll
    static void shutDown() {
        never.countDown();
        for (Node n : nodes) {
            n.scheduler.shutdownNow();
            n.engine.close();
        }
        for (Node n : nodes) {
            n.scheduler.close();
            n.hz.shutdown();
        }
    }

    private static Node node(String name) {
        return nodes.stream().filter(n -> n.name.equals(name)).findFirst().orElseThrow();
    }

    @Test
    @Order(1)
    void everyMemberListsTheThreeWithTheirCapacities() {
        for (Node n : nodes) {
            List<ClusterMember> members = n.engine.members();
            assertThat(members).hasSize(3).allSatisfy(m -> {
                assertThat(m.cpuSlots()).isEqualTo(2);
                assertThat(m.address()).startsWith("127.0.0.1:");
            });
            assertThat(members).filteredOn(ClusterMember::local).containsExactly(n.engine.localMember());
            assertThat(n.engine.name()).startsWith("hazelcast 5.7.0, cluster 'hts-test-");
        }
    }

    @Test
    @Order(2)
    void aSweepOverThreeMembersEqualsARunOnOneJvm() {
        shardsRun.values().forEach(c -> c.set(0));
        SweepGraph sweep = node("a").sweep; // the coordinator's own copy: its shards are counted too

        GraphRun run = node("a").scheduler.submit(sweep.graph).await();

        assertThat(run.results(sweep.simulations)).isEqualTo(SweepGraph.expected(300));
        assertThat(run.result(sweep.total))
                .isEqualTo(SweepGraph.expected(300).stream()
                        .mapToLong(Long::longValue)
                        .sum());
        assertThat(shardsRun.get("b").get()).isPositive();
        assertThat(shardsRun.get("c").get()).isPositive();
        assertThat(shardsRun.values().stream().mapToInt(AtomicInteger::get).sum())
                .isEqualTo(300);
    }

    @Test
    @Order(3)
    void aMemberWithoutTheGraphRefusesItNamingGraphAndMember() {
        SweepGraph unknown = new SweepGraph("unknown", 8, 1, i -> {});

        assertThatThrownBy(() -> node("a").scheduler.execute(unknown.graph))
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(GraphRefusedException.class)
                .hasMessageMatching("graph 'unknown' is not registered on member 127\\.0\\.0\\.1:\\d+ \\(.*\\), which"
                        + " registers \\[.*sweep.*\\]; every member must register the same graphs .*");
    }

    @Test
    @Order(4)
    void aMemberWithAnotherVersionOfTheGraphRefusesIt() {
        SweepGraph versioned = new SweepGraph("versioned", 8, 1, i -> {});

        assertThatThrownBy(() -> node("a").scheduler.execute(versioned.graph))
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(GraphRefusedException.class)
                .hasMessageContaining("graph 'versioned' on member 127.0.0.1:")
                .hasMessageContaining("the members run different versions of the graph");
    }

    @Test
    @Order(5)
    void cancellingARunCancelsItsSlicesOnTheirMembers() {
        SweepGraph slow = new SweepGraph("slow", 4, 1, i -> {});

        GraphRun run = node("a").scheduler.submit(slow.graph);
        awaitQuietly(bEntered);
        run.cancel();

        assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        await().atMost(WAIT).until(() -> node("b").scheduler.activeRuns().isEmpty());
    }

    @Test
    @Order(6)
    void aMemberShutDownMidRunLeavesTheRunCompleteWithEveryShardCountedOnce() {
        List<MembershipEvent> events = new CopyOnWriteArrayList<>();
        node("a").engine.onMembershipChange(events::add);
        SweepGraph blocking = new SweepGraph("blocking", 12, 2, i -> {});

        GraphRun run = node("a").scheduler.submit(blocking.graph);
        awaitQuietly(cEntered);
        node("c").hz.shutdown();

        assertThat(run.await().results(blocking.simulations)).isEqualTo(SweepGraph.expected(12));
        assertThat(events).anySatisfy(e -> assertThat(e.kind()).isEqualTo(MembershipEvent.Kind.LEFT));
        assertThat(node("a").engine.members()).hasSize(2);
    }
}
