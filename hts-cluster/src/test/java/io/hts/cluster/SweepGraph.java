package io.hts.cluster;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.util.List;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * The sweep every member of the cluster tests registers: a seed, {@code n} simulations of a
 * pseudo-random walk each (distributed, slices of {@code slice}), and their total. A simulation's
 * result carries its index in its low digits, so a result counted twice or missing shows.
 */
final class SweepGraph {

    static final int STEPS = 2_000;

    final TaskGraph graph;
    final Task<Long> seed;
    final TaskGroup<Long> simulations;
    final Task<Long> total;

    SweepGraph(String name, int n, int slice, IntConsumer onEachShard) {
        graph = TaskGraph.named(name);
        seed = graph.task("seed").cpu(ctx -> 42L);
        simulations = graph.group(
                        "simulate",
                        n,
                        (i, t) -> t.after(seed).cpu(ctx -> {
                            onEachShard.accept(i);
                            return walk(ctx.input(seed), i);
                        }))
                .distributed(slice);
        total = graph.task("total")
                .after(simulations)
                .cpu(ctx -> ctx.inputs(simulations).stream()
                        .mapToLong(Long::longValue)
                        .sum());
    }

    SweepGraph(int n, int slice) {
        this("sweep", n, slice, i -> {});
    }

    /** Shard {@code i}'s result: a walk's end position, times 100 000, plus {@code i}. */
    static long walk(long seed, int i) {
        long x = seed * 6364136223846793005L + i;
        long position = 0;
        for (int s = 0; s < STEPS; s++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            position += (x >>> 63) == 0 ? 1 : -1;
        }
        return position * 100_000 + i;
    }

    /** What one JVM computes. */
    static List<Long> expected(int n) {
        return IntStream.range(0, n).mapToObj(i -> walk(42L, i)).toList();
    }
}
