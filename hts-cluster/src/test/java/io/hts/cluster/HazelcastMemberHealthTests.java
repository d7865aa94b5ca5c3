package io.hts.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hazelcast.core.HazelcastInstance;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two embedded members on 127.0.0.1: a member publishes its load by coordinator; with statuses
 * only every ten minutes, a member whose scheduler is shut down is published DOWN at once, and the
 * coordinator's runs keep every slice then.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HazelcastMemberHealthTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final List<HazelcastInstance> members = new CopyOnWriteArrayList<>();
    private final List<HazelcastClusterEngine> engines = new ArrayList<>();
    private final List<Scheduler> schedulers = new ArrayList<>();
    private final List<AtomicInteger> shardsRun = List.of(new AtomicInteger(), new AtomicInteger());

    @AfterEach
    void shutDown() {
        schedulers.forEach(Scheduler::shutdownNow);
        engines.forEach(HazelcastClusterEngine::close);
        schedulers.forEach(Scheduler::close);
        members.forEach(HazelcastInstance::shutdown);
    }

    /** Two members publishing their status every {@code interval}, each with the sweep counting its shards. */
    private void startTwo(Duration interval, CountDownLatch gate) {
        members.addAll(LoopbackConfig.startMembers("hts-health", 2));
        HazelcastClusterOptions options = new HazelcastClusterOptions(
                "hts-slices", "hts-members", "hts-payloads", Duration.ofMinutes(10), interval);
        for (int k = 0; k < 2; k++) {
            HazelcastClusterEngine engine = new HazelcastClusterEngine(members.get(k), options);
            Scheduler s = Scheduler.builder().threads(2).cluster(engine).build();
            AtomicInteger mine = shardsRun.get(k);
            s.register(new SweepGraph("sweep", 40, 4, i -> mine.incrementAndGet()).graph);
            s.register(new SweepGraph("gated", 4, 1, i -> awaitGate(gate)).graph);
            engines.add(engine);
            schedulers.add(s);
        }
        await().atMost(WAIT)
                .until(() -> engines.stream().allMatch(e -> e.members().size() == 2));
    }

    private static void awaitGate(CountDownLatch gate) {
        try {
            gate.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** A member publishes the load of the slices it runs by the member that sent them. */
    @Test
    void aMemberPublishesItsLoadByCoordinator() {
        CountDownLatch gate = new CountDownLatch(1);
        startTwo(Duration.ofMillis(20), gate);
        HazelcastClusterEngine coordinator = engines.get(0);
        String me = coordinator.localMember().id();
        String other = engines.get(1).localMember().id();

        GraphRun run = schedulers.get(0).submit(new SweepGraph("gated", 4, 1, i -> awaitGate(gate)).graph);
        await().atMost(WAIT)
                .until(() -> coordinator.members().stream()
                        .filter(m -> m.id().equals(other))
                        .anyMatch(m -> m.loadByCoordinator().getOrDefault(me, 0.0) > 0));
        ClusterMember busy = coordinator.members().stream()
                .filter(m -> m.id().equals(other))
                .findFirst()
                .orElseThrow();
        assertThat(busy.loadByCoordinator()).containsOnlyKeys(me);
        assertThat(busy.loadFromOthers(me)).isZero();
        assertThat(busy.loadFromOthers(other)).isEqualTo(busy.load());
        gate.countDown();

        assertThat(run.await().status()).isEqualTo(RunStatus.SUCCEEDED);
        await().atMost(WAIT)
                .until(() -> coordinator.members().stream()
                        .filter(m -> m.id().equals(other))
                        .allMatch(m -> m.loadByCoordinator().isEmpty() && m.load() == 0));
    }

    @Test
    void aMemberWhoseSchedulerIsShutDownIsPublishedDownAtOnceAndGetsNoSlices() {
        startTwo(Duration.ofMinutes(10), new CountDownLatch(0));
        HazelcastClusterEngine coordinator = engines.get(0);
        String other = engines.get(1).localMember().id();
        assertThat(health(coordinator, other)).isEqualTo(DeviceHealth.UP);

        SweepGraph sweep = new SweepGraph("sweep", 40, 4, i -> {});
        GraphRun before = schedulers.get(0).submit(sweep.graph).await();
        assertThat(before.results(sweep.simulations)).isEqualTo(expected(sweep, 40));
        assertThat(shardsRun.get(1).get())
                .as("the other member ran some while UP")
                .isPositive();

        schedulers.get(1).shutdown();
        // published now, not at the next regular status ten minutes from now
        await().atMost(WAIT).until(() -> health(coordinator, other) == DeviceHealth.DOWN);
        assertThat(engines.get(1).localMember().health()).isEqualTo(DeviceHealth.DOWN);
        int ranThere = shardsRun.get(1).get();

        GraphRun after = schedulers.get(0).submit(sweep.graph).await();

        assertThat(after.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(after.results(sweep.simulations)).isEqualTo(expected(sweep, 40));
        assertThat(shardsRun.get(1).get())
                .as("no slice went to the member DOWN")
                .isEqualTo(ranThere);
    }

    private static DeviceHealth health(HazelcastClusterEngine engine, String id) {
        return engine.members().stream()
                .filter(m -> m.id().equals(id))
                .map(ClusterMember::health)
                .findFirst()
                .orElse(DeviceHealth.UP);
    }

    private static List<Long> expected(SweepGraph sweep, int n) {
        return LongStream.range(0, n)
                .map(i -> SweepGraph.walk(42L, (int) i))
                .boxed()
                .toList();
    }
}
