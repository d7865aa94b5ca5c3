package io.hts.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hazelcast.core.HazelcastInstance;
import io.hts.engine.cluster.RemoteTaskException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Adversarial tests over two embedded Hazelcast members on 127.0.0.1 (TCP/IP join, multicast
 * off): a body overflowing its stack remotely, large results by reference left in the map, the
 * cancel of a whole group reaching the worker's bodies.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HazelcastClusterBreakTests {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final List<HazelcastInstance> members = new CopyOnWriteArrayList<>();
    private static final List<HazelcastClusterEngine> engines = new ArrayList<>();
    private static final List<Scheduler> schedulers = new ArrayList<>();
    private static final CountDownLatch entered = new CountDownLatch(1);

    @BeforeAll
    static void startTwoMembers() {
        members.addAll(LoopbackConfig.startMembers("hts-break", 2));
        for (int k = 0; k < 2; k++) {
            HazelcastClusterEngine engine = new HazelcastClusterEngine(members.get(k));
            // the coordinator (k = 0) has one worker, the other four: slices go to the other
            Scheduler s =
                    Scheduler.builder().threads(k == 0 ? 1 : 4).cluster(engine).build();
            s.register(overflowing());
            s.register(big());
            s.register(cooperative(k == 0 ? new CountDownLatch(0) : entered));
            engines.add(engine);
            schedulers.add(s);
        }
        await().atMost(WAIT)
                .until(() -> engines.stream().allMatch(e -> e.members().size() == 2));
    }

    @AfterAll
    static void shutDown() {
        schedulers.forEach(Scheduler::shutdownNow);
        engines.forEach(HazelcastClusterEngine::close);
        schedulers.forEach(Scheduler::close);
        members.forEach(HazelcastInstance::shutdown);
    }

    private static TaskGraph overflowing() {
        TaskGraph g = TaskGraph.named("overflowing");
        g.group("part", 2, (i, t) -> t.cpu(ctx -> recurse(0))).distributed(2);
        return g;
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }

    private static TaskGraph big() {
        TaskGraph g = TaskGraph.named("big");
        g.group(
                        "part",
                        4,
                        (i, t) -> t.cpu(ctx -> {
                            byte[] b = new byte[80 * 1024];
                            b[1] = (byte) i;
                            return b;
                        }))
                .distributed(2);
        return g;
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

    @SuppressWarnings("unchecked")
    private static <T> TaskGroup<T> part(TaskGraph g) {
        return (TaskGroup<T>) g.find("part[0]").orElseThrow().group();
    }

    @Test
    void aRemoteStackOverflowFailsItsTasksWithARemoteTaskException() throws Exception {
        TaskGraph g = overflowing();

        GraphRun run = schedulers.get(0).submit(g);

        try {
            run.await(WAIT);
            throw new AssertionError("succeeded");
        } catch (TimeoutException ex) {
            run.cancel();
            throw new AssertionError("the run never ended: " + run.states(), ex);
        } catch (GraphRunException expected) {
            assertThat(expected.getCause())
                    .isInstanceOf(RemoteTaskException.class)
                    .hasMessageContaining("java.lang.StackOverflowError");
        }
    }

    @Test
    void largeResultsTravelByReferenceAndLeaveThePayloadMapEmpty() {
        TaskGraph g = big();

        GraphRun run = schedulers.get(0).execute(g);

        List<byte[]> results = run.results(part(g));
        for (int i = 0; i < 4; i++) {
            assertThat(results.get(i)).hasSize(80 * 1024);
            assertThat(results.get(i)[1]).isEqualTo((byte) i);
        }
        String map = engines.get(0).options().payloadMap();
        await().atMost(WAIT).until(() -> members.get(0).getMap(map).isEmpty());
    }

    @Test
    void cancellingTheWholeGroupReachesTheWorkersBodies() throws Exception {
        TaskGraph g = cooperative(new CountDownLatch(0));

        GraphRun run = schedulers.get(0).submit(g);
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        run.cancel(part(g));

        try {
            run.await(Duration.ofSeconds(10));
            throw new AssertionError("succeeded");
        } catch (TimeoutException ex) {
            run.cancel();
            throw new AssertionError("the run never ended: " + run.states(), ex);
        } catch (GraphRunException expected) {
            assertThat(run.states().values()).containsOnly(TaskState.CANCELLED);
        }
        await().atMost(WAIT).until(() -> schedulers.get(1).activeRuns().isEmpty());
    }
}
