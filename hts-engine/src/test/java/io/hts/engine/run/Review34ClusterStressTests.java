package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.cluster.LoopbackCluster;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Random runs of a graph with a distributed group over three loopback members, with retries and
 * remote failures, a member that is lost (its held slices failing over), a member that lacks the
 * graph, cancels of the run, a task or the group at random moments, both failure modes, and
 * dynamic tasks on the coordinator after members of the group: every run ends, every task final,
 * results right, the status following the tasks.
 */
class Review34ClusterStressTests {

    private static final Duration WAIT = Duration.ofSeconds(20);

    /** The graph every member registers: a seed, a distributed group (failures by seed and index), a sum. */
    private static final class Shape {
        final TaskGraph graph;
        final Task<Integer> seed;
        final TaskGroup<Integer> group;
        final Task<Long> sum;

        Shape(int n, int slice, long failSeed, int retries, boolean spawn, List<DynamicTask<Integer>> spawned) {
            graph = TaskGraph.named("cluster-stress");
            seed = graph.task("seed").cpu(ctx -> 1_000);
            group = graph.group(
                            "part",
                            n,
                            (i, t) -> t.after(seed)
                                    .retries(retries, Duration.ofMillis(1))
                                    .cpu(ctx -> {
                                        long mix = failSeed * 31 + i * 7L + ctx.attempt();
                                        if (failSeed != 0 && Math.floorMod(mix, 5) == 0) {
                                            throw new IllegalStateException(
                                                    "part " + i + " fails (attempt " + ctx.attempt() + ")");
                                        }
                                        return ctx.input(seed) + i;
                                    }))
                    .distributed(slice);
            sum = graph.task("sum").after(group).cpu(ctx -> {
                long s = 0;
                for (int v : ctx.inputs(group)) {
                    s += v;
                }
                return s;
            });
            if (spawn) {
                graph.task("spawner").after(seed).cpu(ctx -> {
                    for (Task<Integer> m : group.members()) {
                        spawned.add(DynamicTasks.spawn(
                                ctx, "after-" + m.name(), x -> x.input(m) * 2, List.of(), m.index()));
                    }
                    return 0;
                });
            }
        }
    }

    static final java.util.Map<String, Integer> STATS = new java.util.concurrent.ConcurrentHashMap<>();

    @org.junit.jupiter.api.AfterAll
    static void stats() {
        System.out.println("STATS " + STATS);
    }

    @Test
    void randomDistributedRuns() throws Exception {
        Long replay = Long.getLong("hts.stress.seed"); // a failure's seed, to run that round again
        if (replay != null) {
            for (int again = 0; again < 50; again++) {
                oneRound(replay);
            }
            return;
        }
        long base = ThreadLocalRandom.current().nextLong();
        for (int round = 0; round < 200; round++) {
            oneRound(base + round);
        }
    }

    private void oneRound(long seedValue) throws Exception {
        String at = "seed " + seedValue;
        Random rnd = new Random(seedValue);
        int n = 4 + rnd.nextInt(12);
        int slice = 1 + rnd.nextInt(3);
        long failSeed = rnd.nextInt(3) == 0 ? 0 : rnd.nextLong();
        int retries = rnd.nextInt(3);
        boolean spawn = rnd.nextBoolean();
        boolean lacking = rnd.nextInt(5) == 0;
        boolean lose = rnd.nextInt(4) == 0;
        FailureMode mode = rnd.nextBoolean() ? FailureMode.FAIL_FAST : FailureMode.CONTINUE;
        int action = rnd.nextInt(6);
        List<DynamicTask<Integer>> spawned = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (LoopbackCluster cluster = new LoopbackCluster()) {
            List<Scheduler> schedulers = new ArrayList<>();
            try {
                List<LoopbackCluster.Member> members = new ArrayList<>();
                for (String id : List.of("a", "b", "c")) {
                    LoopbackCluster.Member m = cluster.member(id);
                    members.add(m);
                    Scheduler s = Scheduler.builder().threads(2).cluster(m).build();
                    schedulers.add(s);
                    if (!(lacking && id.equals("c"))) {
                        s.register(new Shape(n, slice, failSeed, retries, spawn, new ArrayList<>()).graph);
                    }
                }
                if (lose) {
                    members.get(1).hold(w -> true);
                }
                Shape shape = new Shape(n, slice, failSeed, retries, spawn, spawned);
                GraphRun run = schedulers.get(0).submit(shape.graph, RunOptions.failureMode(mode));
                if (lose) {
                    spinMicros(rnd.nextInt(2000));
                    members.get(1).lose();
                }
                spinMicros(rnd.nextInt(3000));
                switch (action) {
                    case 0 -> run.cancel();
                    case 1 -> run.cancel(shape.group.get(rnd.nextInt(n)));
                    case 2 -> run.cancel(shape.group);
                    default -> {}
                }
                try {
                    run.await(WAIT);
                } catch (GraphRunException expected) {
                    // checked below
                } catch (TimeoutException hung) {
                    throw new AssertionError(at + ": the run did not end: " + run + "\n" + run.diagnose(), hung);
                }
                assertThat(run.states().values()).as(at).allMatch(TaskState::isTerminal);
                assertThat(run.pendingTasks()).as(at).isZero();
                for (int i = 0; i < n; i++) {
                    Task<Integer> m = shape.group.get(i);
                    if (run.state(m) == TaskState.SUCCEEDED) {
                        assertThat(run.result(m)).as(at + " " + m.name()).isEqualTo(1_000 + i);
                    }
                }
                if (run.state(shape.sum) == TaskState.SUCCEEDED) {
                    assertThat(run.result(shape.sum)).as(at).isEqualTo(1_000L * n + (long) n * (n - 1) / 2);
                }
                for (DynamicTask<Integer> d : spawned) {
                    assertThat(d.state().isTerminal()).as(at + " " + d).isTrue();
                    if (d.state() == TaskState.SUCCEEDED) {
                        String member = d.name.substring("after-".length());
                        int i = Integer.parseInt(member.substring(member.indexOf('[') + 1, member.indexOf(']')));
                        assertThat(d.result()).as(at + " " + d).isEqualTo(2 * (1_000 + i));
                    }
                }
                STATS.merge(run.status() + (lose ? "/lost" : "") + (lacking ? "/lacking" : ""), 1, Integer::sum);
                STATS.merge(
                        "remote-served",
                        members.get(1).served() + members.get(2).served(),
                        Integer::sum);
                boolean anyFailed = !run.failures().isEmpty();
                if (anyFailed) {
                    assertThat(run.status()).as(at).isEqualTo(RunStatus.FAILED);
                } else if (action > 2 && !lacking && failSeed == 0 && !lose) {
                    assertThat(run.status()).as(at + " " + run.states()).isEqualTo(RunStatus.SUCCEEDED);
                }
                if (lacking && run.failures().stream().anyMatch(f -> f.error() instanceof TaskCancelledException)) {
                    throw new AssertionError(at + ": a cancellation recorded as a failure " + run.failures());
                }
            } finally {
                for (Scheduler s : schedulers) {
                    s.shutdownNow();
                }
                for (Scheduler s : schedulers) {
                    s.close();
                }
            }
        }
    }

    private static void spinMicros(int micros) {
        long until = System.nanoTime() + micros * 1000L;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }
}
