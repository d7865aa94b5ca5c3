package io.hts.engine.graph.internal;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import java.lang.ref.WeakReference;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The validated, immutable, int-indexed form of a {@link TaskGraph}, shared by every run of it:
 * its tasks (with their bodies and settings) and their {@link GraphTopology} (names, edges, order,
 * the layout of per-run arrays). Task {@code i} is the graph's i-th task (creation order). The
 * scheduler gets it with {@link #of(TaskGraph)}; users see {@link TaskGraph#compile()}'s topology.
 */
public final class CompiledGraph {

    /*
     * The bridge to TaskGraph. A graph compiles itself once, under its own lock, and keeps the
     * result in a volatile field that only its package can reach (typed Object there, so that the
     * public TaskGraph does not depend on this class); TaskGraph's class initialiser installs,
     * once, the function that answers it (through GraphCompiler.installBridge), so that this
     * package can ask without TaskGraph exposing the compiled form in its public API (the pattern
     * of the JDK's SharedSecrets). Every caller holds a TaskGraph instance, so TaskGraph is
     * initialised before any call; the field is volatile, and a caller that still reads null (a
     * graph handed over by a data race) forces the initialisation, whose lock publishes the write.
     */
    private static volatile @Nullable Function<TaskGraph, CompiledGraph> compiler;

    private final TaskGraph graph;
    private final Task<?>[] tasks;
    private final GraphTopology topology;
    private final boolean anyGpuBody;
    private volatile @Nullable Binding binding;

    /**
     * Installs the bridge; TaskGraph's class initialiser calls it, once.
     *
     * @param compile validates, compiles and caches a graph
     * @throws IllegalStateException when a bridge is installed already
     */
    public static synchronized void install(Function<TaskGraph, CompiledGraph> compile) {
        if (compiler != null) {
            throw new IllegalStateException("the TaskGraph bridge is installed already");
        }
        compiler = compile;
    }

    /**
     * A graph's compiled form: validated and compiled on the first call, the same object later.
     *
     * @param graph the graph
     * @return its compiled form
     * @throws io.hts.engine.graph.GraphValidationException naming the offending tasks
     */
    public static CompiledGraph of(TaskGraph graph) {
        Function<TaskGraph, CompiledGraph> c = compiler;
        if (c == null) {
            initialise();
            c = Objects.requireNonNull(compiler, "TaskGraph installed no bridge");
        }
        return c.apply(graph);
    }

    private static void initialise() {
        try {
            Class.forName(TaskGraph.class.getName(), true, TaskGraph.class.getClassLoader());
        } catch (ClassNotFoundException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Made by the graph's compiler.
     *
     * @param graph the graph
     * @param tasks its tasks, by index
     * @param topology their shape
     */
    public CompiledGraph(TaskGraph graph, Task<?>[] tasks, GraphTopology topology) {
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
     * per owner and kept while that owner is the last to ask.
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
        return "compiled " + topology;
    }
}
