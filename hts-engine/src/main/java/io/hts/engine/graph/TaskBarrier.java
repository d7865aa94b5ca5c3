package io.hts.engine.graph;

import java.util.List;

/**
 * A join point: completes when everything it waits for has completed, and lets tasks that depend
 * on it start. It has no body and no result; it costs one dependency step, not a thread.
 *
 * <pre>{@code
 * TaskBarrier loaded = graph.barrier("loaded").after(readA, readB, readC);
 * graph.task("train").after(loaded).cpu(ctx -> ...);
 * }</pre>
 */
public final class TaskBarrier implements Dependency {

    private final Task<Void> task;

    TaskBarrier(Task<Void> task) {
        this.task = task;
    }

    /** The barrier's name. */
    public String name() {
        return task.name();
    }

    @Override
    public TaskGraph graph() {
        return task.graph();
    }

    /** The barrier's node in the graph. */
    public Task<Void> task() {
        return task;
    }

    /**
     * Adds what the barrier waits for. Allowed until the graph is first submitted.
     *
     * @param dependencies tasks, groups or barriers of the same graph
     * @return this barrier
     */
    public TaskBarrier after(Dependency... dependencies) {
        task.after(dependencies);
        return this;
    }

    @Override
    public List<Task<?>> tasks() {
        return List.of(task);
    }

    @Override
    public String toString() {
        return "barrier '" + name() + "'";
    }
}
