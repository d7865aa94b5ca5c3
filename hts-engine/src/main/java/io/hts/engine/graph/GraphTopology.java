package io.hts.engine.graph;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * The shape of a compiled graph without its tasks: names, edges, a topological order and the
 * layout of per-run arrays. Immutable; it holds no task body and nothing a body captured, so a
 * run profile kept after its graph was dropped keeps only this (a few ints per task, two per edge,
 * and the name strings).
 *
 * <p>Task {@code i} is the graph's i-th task (creation order). Edges are stored twice in
 * compressed sparse rows: successors of {@code i} are
 * {@code successor(successorStart(i)) .. successor(successorEnd(i) - 1)}, predecessors likewise.
 * Duplicate declarations of the same dependency are collapsed, so a task's in-degree counts each
 * upstream task once, and each task's predecessors are sorted by index.
 */
public final class GraphTopology {

    private static final int SPREAD = 16;
    private static final int SPREAD_THRESHOLD = SPREAD * SPREAD;

    private final String name;
    private final String[] names;
    private final String[] statisticsNames;
    private final BitSet barriers;
    private final int[] successorStart;
    private final int[] successors;
    private final int[] predecessorStart;
    private final int[] predecessors;
    private final int[] roots;
    private final int[] topologicalOrder;
    /** Rows of the spread layout of per-run arrays, 0 for the identity layout of small graphs. */
    private final int rows;

    private final long bytes;

    GraphTopology(
            String name,
            Task<?>[] tasks,
            int[] successorStart,
            int[] successors,
            int[] predecessorStart,
            int[] predecessors,
            int[] roots,
            int[] topologicalOrder) {
        this.name = name;
        int n = tasks.length;
        this.names = new String[n];
        this.statisticsNames = new String[n];
        this.barriers = new BitSet();
        long nameBytes = 0;
        for (int i = 0; i < n; i++) {
            names[i] = tasks[i].name();
            statisticsNames[i] = tasks[i].statisticsName();
            if (tasks[i].isBarrier()) {
                barriers.set(i);
            }
            nameBytes += 40 + names[i].length();
        }
        this.successorStart = successorStart;
        this.successors = successors;
        this.predecessorStart = predecessorStart;
        this.predecessors = predecessors;
        this.roots = roots;
        this.topologicalOrder = topologicalOrder;
        this.rows = n >= SPREAD_THRESHOLD ? (n + SPREAD - 1) / SPREAD : 0;
        // two reference arrays, four int arrays of n or n + 1 entries, two of the edges, the names
        this.bytes = 64 + 8L * n + 4L * (4L * n + 2) + 8L * successors.length + nameBytes;
    }

    /** The graph's name. */
    public String name() {
        return name;
    }

    /** The number of tasks. */
    public int size() {
        return names.length;
    }

    /** The number of (distinct) dependency edges. */
    public int edgeCount() {
        return successors.length;
    }

    /**
     * A task's name.
     *
     * @param i its index
     * @return the name
     */
    public String name(int i) {
        return names[i];
    }

    /**
     * The name under which task {@code i}'s statistics aggregate: its group's name for a group
     * member, its own name otherwise.
     *
     * @param i the task
     * @return the statistics name
     */
    public String statisticsName(int i) {
        return statisticsNames[i];
    }

    /**
     * Whether task {@code i} is a barrier's join point.
     *
     * @param i the task
     * @return whether it is a barrier
     */
    public boolean isBarrier(int i) {
        return barriers.get(i);
    }

    /**
     * Where task {@code i}'s entry lives in a run's per-task arrays that workers race for
     * (counters and states, results). Tasks with nearby indices often run at the same moment on different workers; laid
     * out densely, their entries would share cache lines and every write by one worker would
     * invalidate the other's copy (false sharing). The layout deals indices round-robin over 16
     * rows, so consecutive tasks sit a row apart (at least 64 bytes for arrays of ints and larger
     * elements) while memory stays one entry per task, plus at most 15.
     *
     * @param i the task
     * @return its position in per-run arrays of length {@link #slots()}
     */
    public int slot(int i) {
        int r = rows;
        return r == 0 ? i : (i & (SPREAD - 1)) * r + (i >>> 4);
    }

    /** The length of per-run arrays indexed by {@link #slot(int)}. */
    public int slots() {
        return rows == 0 ? names.length : rows * SPREAD;
    }

    /**
     * The first position of task {@code i}'s successors for {@link #successor(int)}.
     *
     * @param i the task
     * @return the position
     */
    public int successorStart(int i) {
        return successorStart[i];
    }

    /**
     * One past the last position of task {@code i}'s successors.
     *
     * @param i the task
     * @return the position
     */
    public int successorEnd(int i) {
        return successorStart[i + 1];
    }

    /**
     * The successor at a position.
     *
     * @param position between a task's successor start and end
     * @return the successor's index
     */
    public int successor(int position) {
        return successors[position];
    }

    /**
     * The first position of task {@code i}'s predecessors for {@link #predecessor(int)}.
     *
     * @param i the task
     * @return the position
     */
    public int predecessorStart(int i) {
        return predecessorStart[i];
    }

    /**
     * One past the last position of task {@code i}'s predecessors.
     *
     * @param i the task
     * @return the position
     */
    public int predecessorEnd(int i) {
        return predecessorStart[i + 1];
    }

    /**
     * The predecessor at a position.
     *
     * @param position between a task's predecessor start and end
     * @return the predecessor's index
     */
    public int predecessor(int position) {
        return predecessors[position];
    }

    /**
     * The number of distinct tasks task {@code i} waits for.
     *
     * @param i the task
     * @return its in-degree
     */
    public int inDegree(int i) {
        return predecessorStart[i + 1] - predecessorStart[i];
    }

    /**
     * The number of distinct tasks that wait for task {@code i}.
     *
     * @param i the task
     * @return its out-degree
     */
    public int outDegree(int i) {
        return successorStart[i + 1] - successorStart[i];
    }

    /** The number of tasks without dependencies. */
    public int rootCount() {
        return roots.length;
    }

    /**
     * A task without dependencies.
     *
     * @param k from 0 to {@link #rootCount()} - 1
     * @return its index
     */
    public int root(int k) {
        return roots[k];
    }

    /**
     * The task at a position of a topological order (every task after all of its dependencies).
     *
     * @param k from 0 to {@link #size()} - 1
     * @return its index
     */
    public int topological(int k) {
        return topologicalOrder[k];
    }

    /**
     * The names of a task's direct dependencies.
     *
     * @param i the task
     * @return the names
     */
    public List<String> predecessorNames(int i) {
        List<String> out = new ArrayList<>(predecessorEnd(i) - predecessorStart(i));
        for (int k = predecessorStart(i); k < predecessorEnd(i); k++) {
            out.add(names[predecessors[k]]);
        }
        return out;
    }

    /**
     * Whether {@code upstream} is a direct dependency of task {@code i}.
     *
     * @param i the task
     * @param upstream the candidate dependency
     * @return whether there is an edge {@code upstream -> i}
     */
    public boolean dependsOn(int i, int upstream) {
        return Arrays.binarySearch(predecessors, predecessorStart[i], predecessorStart[i + 1], upstream) >= 0;
    }

    /** An estimate of the memory this topology holds, in bytes (arrays and name strings). */
    public long estimatedBytes() {
        return bytes;
    }

    @Override
    public String toString() {
        return "topology of graph '" + name + "' (" + sizes() + ")";
    }

    /** E.g. {@code 1 task, 3 edges}: for descriptions (the graph layer stays below observe's formatting). */
    String sizes() {
        int n = size();
        int e = edgeCount();
        return n + (n == 1 ? " task, " : " tasks, ") + e + (e == 1 ? " edge" : " edges");
    }
}
