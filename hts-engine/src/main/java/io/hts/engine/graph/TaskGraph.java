package io.hts.engine.graph;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A directed acyclic graph of tasks: the definition of a piece of work, run any number of times
 * (also concurrently) by a {@code Scheduler}.
 *
 * <p>Tasks, groups and barriers are added through {@link #task(String)}, {@link #group} and
 * {@link #barrier(String)}. Adding is thread-safe until the graph is first submitted; then it is
 * validated once (cycles, unknown or foreign dependencies, self-dependencies; see
 * {@link GraphValidationException}), compiled into an int-indexed form shared by its runs, and
 * frozen. A graph that fails validation stays open, so the mistake can be fixed and the graph
 * submitted again.
 *
 * <p>A load, sixteen shards that read it, and a merge with retries and a time limit (the README's
 * example; a test keeps the two the same):
 *
 * <pre>{@code
 * TaskGraph graph = TaskGraph.named("features");
 * Task<long[]> load = graph.task("load").cpu(ctx -> LongStream.range(0, 8_000_000).toArray());
 * TaskGroup<Long> shards = graph.group("shard", 16, (i, t) -> t.after(load).cpu(ctx -> {
 *     long[] rows = ctx.input(load);
 *     long sum = 0;
 *     for (int r = i; r < rows.length; r += 16) {
 *         sum += rows[r] * rows[r] % 1_000_003;
 *     }
 *     return sum;
 * }));
 * Task<Long> merge = graph.task("merge").after(shards).retries(2).timeout(Duration.ofSeconds(5))
 *         .cpu(ctx -> ctx.inputs(shards).stream().mapToLong(Long::longValue).sum());
 *
 * try (Scheduler scheduler = Scheduler.create()) {
 *     GraphRun run = scheduler.submit(graph);          // asynchronous; runs of one graph may overlap
 *     long total = run.await().result(merge);
 *     System.out.println("total = " + total);
 *     System.out.println(run.profile());               // makespan, critical path, where worker time went
 * }
 * }</pre>
 */
public final class TaskGraph {

    static {
        GraphCompiler.installBridge(); // how graph.internal reads a graph's compiled form (see GraphCompiler)
    }

    private final String name;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayList<Task<?>> tasks = new ArrayList<>();
    /** Task, TaskGroup or TaskBarrier by name; one namespace for all three. */
    private final Map<String, Object> byName = new HashMap<>();

    /**
     * The compiled form, made once by {@link GraphCompiler} under {@code lock}; opaque here (only
     * GraphCompiler knows its type), so that this public class does not depend on the internal one.
     */
    private volatile @Nullable Object compiled;

    private TaskGraph(String name) {
        this.name = name;
    }

    /**
     * Creates an empty graph.
     *
     * @param name the graph's name, shown in events, metrics and traces
     * @return the graph
     */
    public static TaskGraph named(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("a graph name must not be blank");
        }
        return new TaskGraph(name);
    }

    /** The graph's name. */
    public String name() {
        return name;
    }

    /**
     * Starts declaring a task.
     *
     * @param name the task's name, unique in this graph
     * @return a builder; its body call adds the task
     */
    public TaskBuilder task(String name) {
        checkName(name);
        return new TaskBuilder(this, name, null, -1);
    }

    /**
     * Adds {@code size} similar tasks, named {@code name[0]} to {@code name[size - 1]}. Atomic:
     * when {@code member} throws, none of the group's tasks remain in the graph.
     *
     * @param name the group's name, unique in this graph
     * @param size the number of members, 0 or more
     * @param member declares member {@code i} on the builder it is given and returns the task
     * @param <T> the members' result type
     * @return the group
     */
    public <T extends @Nullable Object> TaskGroup<T> group(String name, int size, TaskGroup.Member<T> member) {
        checkName(name);
        Objects.requireNonNull(member, "member");
        if (size < 0) {
            throw new GraphValidationException(
                    GraphValidationException.Problem.INVALID_SETTING,
                    List.of(name),
                    "group '" + name + "' of graph '" + this.name + "': size must be 0 or more, was " + size);
        }
        lock.lock();
        try {
            checkOpen();
            checkUnique(name);
            TaskGroup<T> group = new TaskGroup<>(this, name);
            int mark = tasks.size();
            byName.put(name, group);
            List<Task<T>> members = new ArrayList<>(size);
            try {
                for (int i = 0; i < size; i++) {
                    TaskBuilder b = new TaskBuilder(this, name + "[" + i + "]", group, i);
                    Task<T> t = member.define(i, b);
                    if (t == null || t.group() != group || t.groupIndex() != i) {
                        throw new GraphValidationException(
                                GraphValidationException.Problem.MISSING_BODY,
                                List.of(b.name),
                                "group '" + name + "' member '" + b.name + "': the member function must"
                                        + " return the task built by the builder it was given (call cpu(...),"
                                        + " gpu(...) or bodies(...) on it and return the result)");
                    }
                    members.add(t);
                }
            } catch (RuntimeException | Error ex) {
                for (int i = tasks.size() - 1; i >= mark; i--) {
                    byName.remove(tasks.remove(i).name());
                }
                byName.remove(name);
                throw ex;
            }
            group.setMembers(members);
            return group;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Adds a join point.
     *
     * @param name the barrier's name, unique in this graph
     * @return the barrier; add what it waits for with {@link TaskBarrier#after}
     */
    public TaskBarrier barrier(String name) {
        checkName(name);
        lock.lock();
        try {
            Task<Void> task = new TaskBuilder(this, name, null, -1).build(null, null, true);
            TaskBarrier barrier = new TaskBarrier(task);
            byName.put(name, barrier);
            return barrier;
        } finally {
            lock.unlock();
        }
    }

    /** The number of tasks (group members and barriers included). */
    public int size() {
        lock.lock();
        try {
            return tasks.size();
        } finally {
            lock.unlock();
        }
    }

    /** A snapshot of the tasks, in creation order. */
    public List<Task<?>> tasks() {
        lock.lock();
        try {
            return List.copyOf(tasks);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A task by name.
     *
     * @param name the task's name
     * @return the task, if there is one
     */
    public Optional<Task<?>> find(String name) {
        lock.lock();
        try {
            Object o = byName.get(name);
            if (o instanceof TaskBarrier b) {
                return Optional.of(b.task());
            }
            return o instanceof Task<?> t ? Optional.of(t) : Optional.empty();
        } finally {
            lock.unlock();
        }
    }

    /** Whether the graph has been validated and frozen (it has been submitted or compiled). */
    public boolean isFrozen() {
        return compiled != null;
    }

    /**
     * Validates and compiles the graph, once, and freezes it; a later call, or a submission,
     * reuses the result. Call it to find mistakes before the first submission.
     *
     * @return the compiled graph's shape: names, edges, topological order
     * @throws GraphValidationException naming the offending tasks; the graph then stays open
     */
    public GraphTopology compile() {
        return GraphCompiler.topology(compiledForm());
    }

    /** The compiled form (opaque here), validated and compiled on the first call. */
    Object compiledForm() {
        Object c = compiled;
        if (c != null) {
            return c;
        }
        lock.lock();
        try {
            c = compiled;
            if (c == null) {
                c = GraphCompiler.compileForm(this, tasks.toArray(new Task<?>[0]), byName);
                compiled = c;
            }
            return c;
        } finally {
            lock.unlock();
        }
    }

    <T extends @Nullable Object> Task<T> register(
            TaskBuilder b, @Nullable TaskBody<T> cpu, @Nullable GpuBody<T> gpu, boolean barrier) {
        lock.lock();
        try {
            checkOpen();
            checkUnique(b.name);
            for (Object d : b.deps) {
                checkOwnGraph(b.name, d);
            }
            Task<T> task = new Task<>(this, tasks.size(), b, cpu, gpu, barrier);
            tasks.add(task);
            byName.put(b.name, task);
            return task;
        } finally {
            lock.unlock();
        }
    }

    /** A group's slice size (TaskGroup.distributed); only before the graph is frozen. */
    void setSliceSize(TaskGroup<?> group, int size) {
        lock.lock();
        try {
            checkOpen();
            group.sliceSize(size);
        } finally {
            lock.unlock();
        }
    }

    void addDependencies(Task<?> task, Object[] dependencies) {
        lock.lock();
        try {
            checkOpen();
            for (Object d : dependencies) {
                Objects.requireNonNull(d, () -> "task '" + task.name() + "': a dependency is null");
                checkOwnGraph(task.name(), d);
            }
            for (Object d : dependencies) {
                task.addDeclared(d);
            }
        } finally {
            lock.unlock();
        }
    }

    private void checkOwnGraph(String taskName, Object dependency) {
        if (dependency instanceof Dependency d && d.graph() != this) {
            throw new GraphValidationException(
                    GraphValidationException.Problem.FOREIGN_DEPENDENCY,
                    List.of(taskName),
                    "task '" + taskName + "' of graph '" + name + "' depends on " + d + " of graph '"
                            + d.graph().name() + "'; a task can depend only on tasks of its own graph");
        }
    }

    private void checkName(String taskName) {
        Objects.requireNonNull(taskName, "name");
        if (taskName.isBlank()) {
            throw new GraphValidationException(
                    GraphValidationException.Problem.INVALID_SETTING,
                    List.of(taskName),
                    "graph '" + name + "': a task name must not be blank");
        }
    }

    private void checkUnique(String taskName) {
        Object existing = byName.get(taskName);
        if (existing != null) {
            throw new GraphValidationException(
                    GraphValidationException.Problem.DUPLICATE_NAME,
                    List.of(taskName),
                    "graph '" + name + "' already has " + existing + "; names of tasks, groups and barriers must"
                            + " be unique in a graph");
        }
    }

    private void checkOpen() {
        if (compiled != null) {
            throw new IllegalStateException("graph '" + name + "' has been submitted and is frozen; tasks and"
                    + " dependencies can be added only before the first run (build a new graph instead)");
        }
    }

    @Override
    public String toString() {
        return "graph '" + name + "'";
    }
}
