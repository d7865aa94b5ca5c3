package io.hts.engine.graph;

import java.lang.ref.WeakReference;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The validated, immutable, int-indexed form of a {@link TaskGraph}, shared by every run of it:
 * its tasks (with their bodies and settings) and their {@link GraphTopology} (names, edges, order,
 * the layout of per-run arrays). Task {@code i} is the graph's i-th task (creation order).
 */
public final class CompiledGraph {

    private final TaskGraph graph;
    private final Task<?>[] tasks;
    private final GraphTopology topology;
    private final boolean anyGpuBody;
    private volatile @Nullable Binding binding;

    CompiledGraph(TaskGraph graph, Task<?>[] tasks, GraphTopology topology) {
        this.graph = graph;
        this.tasks = tasks;
        this.topology = topology;
        boolean gpu = false;
        for (Task<?> t : tasks) {
            gpu |= t.gpuBody() != null;
        }
        this.anyGpuBody = gpu;
    }

    /** The graph this was compiled from. */
    public TaskGraph graph() {
        return graph;
    }

    /** The graph's shape: names, edges, topological order, per-run array layout. */
    public GraphTopology topology() {
        return topology;
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
        return topology.edgeCount();
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

    /** Whether any task has a GPU body. */
    public boolean hasGpuBodies() {
        return anyGpuBody;
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

    /** The owner is held weakly: a graph kept by the application must not keep a closed scheduler alive. */
    private record Binding(WeakReference<Object> owner, Object value) {}

    @Override
    public String toString() {
        return "compiled graph '" + name() + "' (" + topology().sizes() + ")";
    }
}
