package io.hts.engine.graph;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The validated, immutable, int-indexed form of a {@link TaskGraph}, shared by every run of it.
 *
 * <p>Task {@code i} is the graph's i-th task (creation order). Edges are stored twice in
 * compressed sparse rows: successors of {@code i} are
 * {@code successor(successorStart(i)) .. successor(successorEnd(i) - 1)}, predecessors likewise.
 * Duplicate declarations of the same dependency are collapsed, so a task's in-degree counts each
 * upstream task once, and each task's predecessors are sorted by index. Memory: a few ints per
 * task plus two ints per edge.
 */
public final class CompiledGraph {

    private final TaskGraph graph;
    private final Task<?>[] tasks;
    private final int[] successorStart;
    private final int[] successors;
    private final int[] predecessorStart;
    private final int[] predecessors;
    private final int[] inDegree;
    private final int[] roots;
    private final int[] topologicalOrder;
    private final boolean anyGpuBody;
    /** Rows of the spread layout of per-run arrays, 0 for the identity layout of small graphs. */
    private final int rows;
    private volatile @Nullable Binding binding;

    CompiledGraph(TaskGraph graph, Task<?>[] tasks, int[] successorStart, int[] successors, int[] predecessorStart,
            int[] predecessors, int[] inDegree, int[] roots, int[] topologicalOrder) {
        this.graph = graph;
        this.tasks = tasks;
        this.successorStart = successorStart;
        this.successors = successors;
        this.predecessorStart = predecessorStart;
        this.predecessors = predecessors;
        this.inDegree = inDegree;
        this.roots = roots;
        this.topologicalOrder = topologicalOrder;
        boolean gpu = false;
        for (Task<?> t : tasks) {
            gpu |= t.gpuBody() != null;
        }
        this.anyGpuBody = gpu;
        this.rows = tasks.length >= SPREAD_THRESHOLD ? (tasks.length + SPREAD - 1) / SPREAD : 0;
    }

    private static final int SPREAD = 16;
    private static final int SPREAD_THRESHOLD = SPREAD * SPREAD;

    /**
     * Where task {@code i}'s entry lives in a run's per-task arrays (counters, states, results,
     * timings). Tasks with nearby indices often run at the same moment on different workers; laid
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
        return rows == 0 ? tasks.length : rows * SPREAD;
    }

    /** The graph this was compiled from. */
    public TaskGraph graph() {
        return graph;
    }

    /** The graph's name. */
    public String name() {
        return graph.name();
    }

    /** The number of tasks. */
    public int size() {
        return tasks.length;
    }

    /** The number of (distinct) dependency edges. */
    public int edgeCount() {
        return successors.length;
    }

    /**
     * A task.
     *
     * @param i its index
     * @return the task
     */
    public Task<?> task(int i) {
        return tasks[i];
    }

    /**
     * A task's name.
     *
     * @param i its index
     * @return the name
     */
    public String name(int i) {
        return tasks[i].name();
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
        return inDegree[i];
    }

    /** A fresh copy of every task's in-degree: a run's remaining-dependency counters start from it. */
    public int[] inDegrees() {
        return inDegree.clone();
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

    /** Whether any task has a GPU body. */
    public boolean hasGpuBodies() {
        return anyGpuBody;
    }

    /**
     * The names of a task's direct dependencies.
     *
     * @param i the task
     * @return the names
     */
    public List<String> predecessorNames(int i) {
        List<String> names = new ArrayList<>(predecessorEnd(i) - predecessorStart(i));
        for (int k = predecessorStart(i); k < predecessorEnd(i); k++) {
            names.add(tasks[predecessors[k]].name());
        }
        return names;
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

    /**
     * How many of task {@code i}'s direct dependencies have an index in {@code [from, to)} (a
     * group's members have consecutive indices).
     *
     * @param i the task
     * @param from the first index, inclusive
     * @param to the last index, exclusive
     * @return the count
     */
    public int dependenciesBetween(int i, int from, int to) {
        return lowerBound(predecessorStart[i], predecessorStart[i + 1], to)
                - lowerBound(predecessorStart[i], predecessorStart[i + 1], from);
    }

    /**
     * A value derived from this graph for one owner (a scheduler's execution plan), computed once
     * per owner and kept while that owner is the last to ask. Engine-internal.
     *
     * @param owner the owner
     * @param type the value's type
     * @param factory computes the value
     * @param <V> the value's type
     * @return the value
     */
    public <V> V bound(Object owner, Class<V> type, Function<CompiledGraph, V> factory) {
        Binding b = binding;
        if (b != null && b.owner.get() == owner) {
            return type.cast(b.value);
        }
        synchronized (this) {
            b = binding;
            if (b != null && b.owner.get() == owner) {
                return type.cast(b.value);
            }
            V value = factory.apply(this);
            binding = new Binding(new WeakReference<>(owner), value);
            return value;
        }
    }

    private int lowerBound(int from, int to, int key) {
        int lo = from;
        int hi = to;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (predecessors[mid] < key) {
                lo = mid + 1;
            }
            else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The owner is held weakly: a graph kept by the application must not keep a closed scheduler alive. */
    private record Binding(WeakReference<Object> owner, Object value) {
    }

    @Override
    public String toString() {
        return "compiled graph '" + name() + "' (" + size() + " tasks, " + edgeCount() + " edges)";
    }
}
