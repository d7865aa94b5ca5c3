package io.hts.benchmarks.workload;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.IntConsumer;

/**
 * A DAG shape shared by HTS and its baselines, so that every implementation runs exactly the same
 * graph. Nodes are numbered so that every dependency has a smaller number than its dependent
 * (index order is a topological order).
 */
public final class Shape {

    private final String name;
    private final int size;
    private final int[] predStart;
    private final int[] preds;
    private final int[] succStart;
    private final int[] succs;
    private final int[] roots;

    private Shape(String name, int size, int[] predStart, int[] preds) {
        this.name = name;
        this.size = size;
        this.predStart = predStart;
        this.preds = preds;
        this.succStart = new int[size + 1];
        for (int p : preds) {
            succStart[p + 1]++;
        }
        for (int i = 0; i < size; i++) {
            succStart[i + 1] += succStart[i];
        }
        this.succs = new int[preds.length];
        int[] fill = Arrays.copyOf(succStart, size);
        int rootCount = 0;
        for (int i = 0; i < size; i++) {
            if (predStart[i] == predStart[i + 1]) {
                rootCount++;
            }
            for (int k = predStart[i]; k < predStart[i + 1]; k++) {
                if (preds[k] >= i) {
                    throw new IllegalStateException("dependency " + preds[k] + " of " + i + " is not before it");
                }
                succs[fill[preds[k]]++] = i;
            }
        }
        this.roots = new int[rootCount];
        for (int i = 0, r = 0; i < size; i++) {
            if (predStart[i] == predStart[i + 1]) {
                roots[r++] = i;
            }
        }
    }

    /** {@code n} tasks without dependencies. */
    public static Shape independent(int n) {
        return new Shape("independent-" + n, n, new int[n + 1], new int[0]);
    }

    /** {@code n} tasks, each depending on the one before. */
    public static Shape chain(int n) {
        int[] start = new int[n + 1];
        int[] preds = new int[Math.max(0, n - 1)];
        for (int i = 1; i < n; i++) {
            start[i] = i - 1;
            preds[i - 1] = i - 1;
        }
        start[n] = Math.max(0, n - 1);
        return new Shape("chain-" + n, n, start, preds);
    }

    /** A complete binary tree of {@code levels} levels (2^levels - 1 tasks): each task makes two children ready. */
    public static Shape binaryTree(int levels) {
        int n = (1 << levels) - 1;
        int[] start = new int[n + 1];
        int[] preds = new int[n - 1];
        for (int i = 1; i < n; i++) {
            start[i] = i - 1;
            preds[i - 1] = (i - 1) / 2;
        }
        start[n] = n - 1;
        return new Shape("tree-" + n, n, start, preds);
    }

    /**
     * {@code levels} levels of {@code width} tasks; each task below the first level depends on
     * {@code parents} distinct tasks of the level above, chosen with a fixed seed.
     */
    public static Shape layered(int levels, int width, int parents, long seed) {
        int n = levels * width;
        int[] start = new int[n + 1];
        int[] preds = new int[(levels - 1) * width * parents];
        SplittableRandom random = new SplittableRandom(seed);
        int e = 0;
        for (int i = 0; i < n; i++) {
            start[i] = e;
            int level = i / width;
            if (level == 0) {
                continue;
            }
            int[] chosen = new int[parents];
            for (int p = 0; p < parents; p++) {
                int candidate;
                boolean dup;
                do {
                    candidate = (level - 1) * width + random.nextInt(width);
                    dup = false;
                    for (int q = 0; q < p; q++) {
                        dup |= chosen[q] == candidate;
                    }
                } while (dup);
                chosen[p] = candidate;
                preds[e++] = candidate;
            }
        }
        start[n] = e;
        return new Shape("dag-" + levels + "x" + width, n, start, preds);
    }

    /**
     * A shape given by the predecessors of each task, as {@link ShapeFile} stores it.
     *
     * @param name the shape's name (ShapeFile writes only names of one word)
     * @param predecessors {@code predecessors[i]} lists the tasks task {@code i} depends on, each
     *     smaller than {@code i}
     * @return the shape
     * @throws IllegalArgumentException when a predecessor is negative or not before its task
     */
    public static Shape fromPredecessors(String name, int[][] predecessors) {
        int n = predecessors.length;
        int[] start = new int[n + 1];
        for (int i = 0; i < n; i++) {
            start[i + 1] = start[i] + predecessors[i].length;
        }
        int[] preds = new int[start[n]];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < predecessors[i].length; k++) {
                int p = predecessors[i][k];
                if (p < 0 || p >= i) {
                    throw new IllegalArgumentException("dependency " + p + " of " + i + " is not before it");
                }
                preds[start[i] + k] = p;
            }
        }
        return new Shape(name, n, start, preds);
    }

    public String name() {
        return name;
    }

    public int size() {
        return size;
    }

    /** The number of dependencies (edges), counted once per task and predecessor. */
    public int edgeCount() {
        return preds.length;
    }

    public int rootCount() {
        return roots.length;
    }

    public int root(int k) {
        return roots[k];
    }

    public int predecessorCount(int i) {
        return predStart[i + 1] - predStart[i];
    }

    public int predecessor(int i, int k) {
        return preds[predStart[i] + k];
    }

    public int successorStart(int i) {
        return succStart[i];
    }

    public int successorEnd(int i) {
        return succStart[i + 1];
    }

    public int successor(int position) {
        return succs[position];
    }

    public boolean isSink(int i) {
        return succStart[i] == succStart[i + 1];
    }

    /** The number of tasks on the longest dependency chain. */
    public int depth() {
        int[] d = new int[size];
        int max = 0;
        for (int i = 0; i < size; i++) {
            int best = 0;
            for (int k = predStart[i]; k < predStart[i + 1]; k++) {
                best = Math.max(best, d[preds[k]]);
            }
            d[i] = best + 1;
            max = Math.max(max, d[i]);
        }
        return max;
    }

    /**
     * The same shape as an HTS graph; task {@code i} calls {@code body.accept(i)}.
     *
     * @param body the work of each task
     * @return the graph (not yet compiled)
     */
    public TaskGraph toGraph(IntConsumer body) {
        TaskGraph graph = TaskGraph.named(name);
        @SuppressWarnings("unchecked")
        Task<Object>[] tasks = new Task[size];
        for (int i = 0; i < size; i++) {
            TaskBuilder b = graph.task("n" + i);
            for (int k = predStart[i]; k < predStart[i + 1]; k++) {
                b.after(tasks[preds[k]]);
            }
            int node = i;
            tasks[i] = b.cpu(ctx -> {
                body.accept(node);
                return null;
            });
        }
        return graph;
    }
}
