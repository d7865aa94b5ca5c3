package io.hts.benchmarks;

import com.hazelcast.core.HazelcastInstance;
import io.hts.benchmarks.workload.CpuWork;
import io.hts.cluster.HazelcastClusterEngine;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Issue 17's benchmark: a sweep of {@code shards} distributed shards (slices of {@code slice}) on
 * a cluster of one member against three, all embedded in this JVM and joined over TCP/IP on
 * 127.0.0.1 (multicast and auto-detection off). Each member has a scheduler of {@code threads}
 * workers and registers the sweep; the first member submits. With one member every slice runs in
 * the coordinator's pool without encoding; with three, two thirds of the slices take the remote path
 * (encode, Hazelcast's executor, the worker's run, the answer, decode). On one machine the members
 * share its cores, so the difference of the two is the remote path's cost, not a speed-up:
 * {@code (time(3) - time(1)) / shards} is its overhead a shard, {@code shards / time} the
 * throughput. The counter {@code remoteShards} gives the shards other members ran, summed over the
 * iterations. docs/cluster.md has the figures.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 10, batchSize = 1)
@Measurement(iterations = 20, batchSize = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-Xms1g",
            "-Xmx1g",
            // what Hazelcast asks of Java 9+ for its internal API (as a member on a real host should run)
            "--add-modules=java.se",
            "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.management/sun.management=ALL-UNNAMED",
            "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED"
        })
public class ClusterSweepBenchmark {

    @Param({"1", "3"})
    public int members;

    @Param("1000")
    public int shards;

    @Param({"0", "100"})
    public int workMicros;

    @Param("50")
    public int slice;

    @Param("2")
    public int threads;

    private final List<HazelcastInstance> instances = new ArrayList<>();
    private final List<Scheduler> schedulers = new ArrayList<>();
    private final LongAdder remote = new LongAdder();
    private Sweep sweep;

    /** The sweep: a seed, the shards (each CPU work of workMicros, counting where it ran), the total. */
    record Sweep(TaskGraph graph, TaskGroup<Long> shards, Task<Long> total) {

        static Sweep of(int n, int slice, long tokens, Runnable onShard) {
            TaskGraph g = TaskGraph.named("cluster-sweep");
            Task<Long> seed = g.task("seed").cpu(ctx -> 42L);
            TaskGroup<Long> shards = g.group(
                            "shard",
                            n,
                            (i, t) -> t.after(seed).cpu(ctx -> {
                                onShard.run();
                                CpuWork.run(tokens);
                                return ctx.input(seed) + i;
                            }))
                    .distributed(slice);
            Task<Long> total = g.task("total")
                    .after(shards)
                    .cpu(ctx -> ctx.inputs(shards).stream()
                            .mapToLong(Long::longValue)
                            .sum());
            return new Sweep(g, shards, total);
        }
    }

    /** Shards run by members other than the submitting one, per sweep. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Remote {
        public long remoteShards;
    }

    @Setup(Level.Trial)
    public void setUp() {
        long tokens = CpuWork.tokensFor(Duration.ofNanos(workMicros * 1000L));
        instances.addAll(LoopbackHazelcast.start("hts-bench", members));
        for (HazelcastInstance hz : instances) {
            boolean submitter = schedulers.isEmpty();
            Scheduler s = Scheduler.builder()
                    .threads(threads)
                    .cluster(new HazelcastClusterEngine(hz))
                    .build();
            Sweep own = Sweep.of(shards, slice, tokens, submitter ? () -> {} : remote::increment);
            s.register(own.graph());
            if (submitter) {
                sweep = own;
            }
            schedulers.add(s);
        }
        long expected = 42L * shards + (long) shards * (shards - 1) / 2;
        HazelcastClusterEngine engine =
                (HazelcastClusterEngine) schedulers.get(0).cluster().orElseThrow();
        LoopbackHazelcast.awaitMembers(engine, members, 0); // every member has published its status
        if (sweep() != expected) {
            throw new IllegalStateException("the sweep's total is wrong");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        schedulers.forEach(Scheduler::close);
        instances.forEach(HazelcastInstance::shutdown);
    }

    @Benchmark
    public long sweep(Remote counter) {
        long before = remote.sum();
        long total = sweep();
        counter.remoteShards += remote.sum() - before;
        return total;
    }

    private long sweep() {
        GraphRun run = schedulers.get(0).execute(sweep.graph());
        return run.result(sweep.total());
    }
}
