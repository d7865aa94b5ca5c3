package io.hts.engine.cluster;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.time.Duration;
import java.util.List;
import java.util.function.IntUnaryOperator;
import java.util.stream.LongStream;

/** The graph of the cluster tests, built alike on every member: a load, a distributed sweep over it, checks, a sum. */
final class Sweeps {

    final TaskGraph graph;
    final Task<long[]> load;
    final TaskGroup<Long> shards;
    final TaskGroup<Long> checks;
    final Task<Long> sum;

    private Sweeps(String name, int n, int sliceSize, IntUnaryOperator fault, Duration timeout, int loadSize) {
        graph = TaskGraph.named(name);
        load = graph.task("load").cpu(ctx -> LongStream.range(0, loadSize).toArray());
        shards = graph.group(
                        "shard",
                        n,
                        (i, t) -> t.after(load).timeout(timeout).cpu(ctx -> {
                            fault.applyAsInt(i);
                            long[] rows = ctx.input(load);
                            long s = 0;
                            for (int r = ctx.groupIndex(); r < rows.length; r += n) {
                                s += rows[r] * rows[r] % 1_000_003;
                            }
                            return s * 1_000 + i; // the index in the low digits: each shard counted once
                        }))
                .distributed(sliceSize);
        checks = graph.group(
                        "check",
                        2,
                        (i, t) -> t.after(shards)
                                .cpu(ctx -> ctx.inputs(shards).stream()
                                                .mapToLong(v -> v % 1_000)
                                                .sum()
                                        + i))
                .distributed(1);
        sum = graph.task("sum")
                .after(shards, checks)
                .cpu(ctx ->
                        ctx.inputs(shards).stream().mapToLong(Long::longValue).sum());
    }

    static Sweeps of(int n, int sliceSize) {
        return new Sweeps("sweep", n, sliceSize, i -> i, Duration.ofSeconds(30), 10_000);
    }

    static Sweeps failing(int n, int sliceSize) {
        return new Sweeps(
                "sweep",
                n,
                sliceSize,
                i -> {
                    throw new IllegalStateException("shard " + i + " has no data here");
                },
                Duration.ofSeconds(30),
                10_000);
    }

    static Sweeps timed(int n, int sliceSize, Duration timeout) {
        return new Sweeps("sweep", n, sliceSize, i -> i, timeout, 10_000);
    }

    static Sweeps large(int n, int sliceSize) {
        return new Sweeps("sweep", n, sliceSize, i -> i, Duration.ofSeconds(30), 100_000);
    }

    /** The shards' results of a run on one JVM. */
    static List<Long> expected(int n, int loadSize) {
        return java.util.stream.IntStream.range(0, n)
                .mapToObj(i -> {
                    long s = 0;
                    for (long r = i; r < loadSize; r += n) {
                        s += r * r % 1_000_003;
                    }
                    return s * 1_000 + i;
                })
                .toList();
    }
}
