package io.hts.engine.graph;

import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A task of a {@link TaskGraph}, and the typed handle through which downstream tasks and the run
 * read its result ({@code ctx.input(task)}, {@code run.result(task)}).
 *
 * <p>Created by {@link TaskBuilder}. Its settings are fixed at creation; dependencies can still be
 * added with {@link #after(Dependency...)} until the graph is first submitted.
 *
 * @param <T> the result type
 */
public final class Task<T extends @Nullable Object> implements Dependency {

    private final TaskGraph graph;
    private final String name;
    private final int index;
    private final @Nullable TaskGroup<?> group;
    private final int groupIndex;
    private final int priority;
    private final @Nullable RetrySpec retry;
    private final @Nullable TimeLimitSpec timeLimit;
    private final long cpuCostNanos;
    private final long gpuCostNanos;
    private final int gpuOrdinal;
    private final Map<String, Long> resources;
    private final @Nullable TaskBody<T> cpuBody;
    private final @Nullable GpuBody<T> gpuBody;
    private final boolean barrier;

    /** Declared dependencies: {@link Dependency} handles or names ({@link String}); guarded by the graph. */
    private Object[] deps;

    private int depCount;

    Task(
            TaskGraph graph,
            int index,
            TaskBuilder b,
            @Nullable TaskBody<T> cpuBody,
            @Nullable GpuBody<T> gpuBody,
            boolean barrier) {
        this.graph = graph;
        this.name = b.name;
        this.index = index;
        this.group = b.group;
        this.groupIndex = b.groupIndex;
        this.priority = b.priority;
        this.retry = b.retry;
        this.timeLimit = b.timeLimit;
        this.cpuCostNanos = b.cpuCostNanos;
        this.gpuCostNanos = b.gpuCostNanos;
        this.gpuOrdinal = b.gpuOrdinal;
        this.resources = b.resources.isEmpty() ? Map.of() : Collections.unmodifiableMap(b.resources);
        this.cpuBody = cpuBody;
        this.gpuBody = gpuBody;
        this.barrier = barrier;
        this.deps = b.deps.toArray();
        this.depCount = deps.length;
    }

    /** The task's name, unique in its graph. */
    public String name() {
        return name;
    }

    @Override
    public TaskGraph graph() {
        return graph;
    }

    /** The task's position in its graph (creation order), which is its index in the compiled graph. */
    public int index() {
        return index;
    }

    /** The group this task belongs to, or {@code null}. */
    public @Nullable TaskGroup<?> group() {
        return group;
    }

    /** The index in its group, or -1. */
    public int groupIndex() {
        return groupIndex;
    }

    /**
     * The name under which statistics and the learned cost model aggregate this task: its group's
     * name for a group member, its own name otherwise.
     */
    public String statisticsName() {
        return group != null ? group.name() : name;
    }

    /** The GPU its GPU attempts are pinned to ({@link TaskBuilder#onGpu}), or -1 for any. */
    public int gpuOrdinal() {
        return gpuOrdinal;
    }

    /** The priority; higher runs first, 0 is normal. */
    public int priority() {
        return priority;
    }

    /** The declared retry, or {@code null} for the scheduler's default. */
    public @Nullable RetrySpec retry() {
        return retry;
    }

    /** The declared time limit, or {@code null} for the scheduler's default. */
    public @Nullable TimeLimitSpec timeLimit() {
        return timeLimit;
    }

    /**
     * The declared cost estimate on a device.
     *
     * @param device the device
     * @return the estimate, or {@code null} when none was declared (the learned model is used)
     */
    public @Nullable Duration estimatedCost(Device device) {
        long nanos = costNanos(device);
        return nanos < 0 ? null : Duration.ofNanos(nanos);
    }

    /**
     * The declared cost estimate in nanoseconds.
     *
     * @param device the device
     * @return the estimate, or -1 when none was declared
     */
    public long costNanos(Device device) {
        return device == Device.CPU ? cpuCostNanos : gpuCostNanos;
    }

    /** Named resource amounts the task holds while it runs. */
    public Map<String, Long> resources() {
        return resources;
    }

    /** The CPU body, or {@code null} for a GPU-only task or a barrier. */
    public @Nullable TaskBody<T> cpuBody() {
        return cpuBody;
    }

    /** The GPU body, or {@code null}. */
    public @Nullable GpuBody<T> gpuBody() {
        return gpuBody;
    }

    /**
     * Whether the task has an implementation for a device.
     *
     * @param device the device
     * @return whether it can run there
     */
    public boolean hasBody(Device device) {
        return device == Device.CPU ? cpuBody != null : gpuBody != null;
    }

    /** Whether this is a {@link TaskBarrier}'s join point, which has no body and completes at once. */
    public boolean isBarrier() {
        return barrier;
    }

    /**
     * Adds dependencies to this task. Allowed until the graph is first submitted.
     *
     * @param dependencies tasks, groups or barriers this task waits for
     * @return this task
     * @throws IllegalStateException when the graph has been submitted
     */
    public Task<T> after(Dependency... dependencies) {
        graph.addDependencies(this, dependencies);
        return this;
    }

    /**
     * Adds dependencies by name, resolved when the graph is first submitted.
     *
     * @param names names of tasks, groups or barriers of the same graph
     * @return this task
     */
    public Task<T> after(String... names) {
        graph.addDependencies(this, (Object[]) names);
        return this;
    }

    @Override
    public List<Task<?>> tasks() {
        return List.of(this);
    }

    /** Appends a declared dependency; the caller holds the graph's lock. */
    void addDeclared(Object dependency) {
        if (depCount == deps.length) {
            deps = java.util.Arrays.copyOf(deps, Math.max(4, depCount * 2));
        }
        deps[depCount++] = Objects.requireNonNull(dependency);
    }

    int declaredDependencyCount() {
        return depCount;
    }

    Object declaredDependency(int i) {
        return deps[i];
    }

    @Override
    public String toString() {
        return "task '" + name + "'";
    }
}
