package io.hts.sample.headline;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The seed's second target: a DAG of {@code nodes} tasks in {@code depth} layers of (nearly) equal
 * width; every node below the first layer depends on 1 to {@code maxParents} distinct nodes of the
 * layer above, drawn from a seeded generator, so the longest chain has exactly {@code depth} tasks.
 * A node spins from a seed made of its index and its parents' results: the results depend on the
 * edges, and a sequential evaluation ({@link #evaluate}) gives the same numbers.
 */
public final class LayeredDag {

    private final int depth;
    private final int[] layerStart;
    private final int[][] parents;

    /**
     * Draws the shape.
     *
     * @param nodes how many nodes
     * @param depth how many layers
     * @param maxParents the most parents a node has
     * @param seed the edges' seed
     */
    public LayeredDag(int nodes, int depth, int maxParents, long seed) {
        this.depth = depth;
        this.layerStart = new int[depth + 1];
        for (int l = 0; l < depth; l++) {
            layerStart[l + 1] = layerStart[l] + nodes / depth + (l < nodes % depth ? 1 : 0);
        }
        this.parents = new int[nodes][];
        SplittableRandom random = new SplittableRandom(seed);
        for (int l = 0; l < depth; l++) {
            for (int node = layerStart[l]; node < layerStart[l + 1]; node++) {
                if (l == 0) {
                    parents[node] = new int[0];
                    continue;
                }
                int above = layerStart[l] - layerStart[l - 1];
                int count = 1 + random.nextInt(Math.min(maxParents, above));
                int[] chosen = random.ints(layerStart[l - 1], layerStart[l])
                        .distinct()
                        .limit(count)
                        .sorted()
                        .toArray();
                parents[node] = chosen;
            }
        }
    }

    /** How many nodes. */
    public int nodes() {
        return parents.length;
    }

    /** How many layers. */
    public int depth() {
        return depth;
    }

    /** How many edges. */
    public int edges() {
        int edges = 0;
        for (int[] p : parents) {
            edges += p.length;
        }
        return edges;
    }

    /** The graph {@code layered-dag}: node {@code j} of layer {@code l} is task {@code L<l>[<j>]}. */
    public TaskGraph graph(CalibratedSpin spin) {
        TaskGraph g = TaskGraph.named("layered-dag");
        List<Task<Long>> tasks = new ArrayList<>(nodes());
        for (int l = 0; l < depth; l++) {
            int first = layerStart[l];
            g.group("L" + l, layerStart[l + 1] - first, (j, t) -> {
                int node = first + j;
                List<Task<Long>> inputs = new ArrayList<>();
                for (int p : parents[node]) {
                    inputs.add(tasks.get(p));
                }
                Task<Long> task = t.after(inputs).cpu(ctx -> {
                    long seed = node;
                    for (Task<Long> input : inputs) {
                        seed = seed * 31 + ctx.input(input);
                    }
                    return spin.work(seed);
                });
                tasks.add(task);
                return task;
            });
        }
        return g;
    }

    /** The most tasks on one dependency chain of a graph (its depth), from its compiled topology. */
    public static int longestChain(GraphTopology topology) {
        int[] chain = new int[topology.size()];
        int longest = 0;
        for (int k = 0; k < topology.size(); k++) {
            int node = topology.topological(k);
            int length = 1;
            for (int p = topology.predecessorStart(node); p < topology.predecessorEnd(node); p++) {
                length = Math.max(length, chain[topology.predecessor(p)] + 1);
            }
            chain[node] = length;
            longest = Math.max(longest, length);
        }
        return longest;
    }

    /** Every node's result, computed one after the other (what the graph's run must produce). */
    public long[] evaluate(CalibratedSpin spin) {
        long[] results = new long[nodes()];
        for (int node = 0; node < results.length; node++) { // layers in order: parents come first
            long seed = node;
            for (int p : parents[node]) {
                seed = seed * 31 + results[p];
            }
            results[node] = spin.work(seed);
        }
        return results;
    }
}
