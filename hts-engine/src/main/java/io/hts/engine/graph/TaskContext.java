package io.hts.engine.graph;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What a running task body can see: its identity, the results of the tasks it depends on, and
 * whether its run has been cancelled.
 */
public interface TaskContext {

    /** The task's name. */
    String taskName();

    /** The name of the task's graph. */
    String graphName();

    /** The id of the run this execution belongs to. */
    long runId();

    /** The attempt number, 1 for the first execution and one more for each retry. */
    int attempt();

    /** The device this body runs on. */
    Device device();

    /** The task's index in its {@link TaskGroup}, or -1 when it is not a group member. */
    int groupIndex();

    /**
     * The result of a task this task depends on.
     *
     * @param upstream a direct dependency of this task
     * @param <U> its result type
     * @return its result (may be {@code null} when that task returned {@code null})
     * @throws IllegalArgumentException when {@code upstream} is not a direct dependency of this task
     */
    <U extends @Nullable Object> U input(Task<U> upstream);

    /**
     * The results of a group this task depends on, in index order.
     *
     * @param upstream a group whose members are all direct dependencies of this task
     * @param <U> the members' result type
     * @return the results, in index order
     * @throws IllegalArgumentException when a member is not a direct dependency of this task
     */
    <U extends @Nullable Object> List<U> inputs(TaskGroup<U> upstream);

    /**
     * Whether the run (or this task) has been cancelled, or the task has timed out. Long bodies
     * should check this and return early; the thread is also interrupted.
     */
    boolean isCancelled();

    /**
     * Throws when {@link #isCancelled()} is true.
     *
     * @throws TaskCancelledException when the task should stop
     */
    default void checkCancelled() {
        if (isCancelled()) {
            throw new TaskCancelledException("task '" + taskName() + "' of run " + runId() + " was cancelled");
        }
    }
}
