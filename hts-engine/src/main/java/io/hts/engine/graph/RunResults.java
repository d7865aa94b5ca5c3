package io.hts.engine.graph;

import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a finished run of a graph offers its reader: each task's final state, result or failure.
 * A run ({@code GraphRun}) is one; a task body gets one from {@link TaskContext#execute(TaskGraph)}.
 */
public interface RunResults {

    /** The run's id, unique within its scheduler. */
    long runId();

    /** The run's status. */
    RunStatus status();

    /**
     * The state of a task in this run.
     *
     * @param task a task of this run's graph
     * @return its state
     */
    TaskState state(Task<?> task);

    /**
     * The result of a task that succeeded.
     *
     * @param task a task of this run's graph
     * @param <T> its result type
     * @return its result
     * @throws IllegalStateException when the task has not succeeded (the message says its state and cause)
     */
    <T extends @Nullable Object> T result(Task<T> task);

    /**
     * The results of a group's members, in index order.
     *
     * @param group a group of this run's graph
     * @param <T> the members' result type
     * @return the results
     * @throws IllegalStateException when a member has not succeeded
     */
    <T extends @Nullable Object> List<T> results(TaskGroup<T> group);

    /**
     * Why a task failed or was cancelled.
     *
     * @param task a task of this run's graph
     * @return the failure, when the task FAILED or was CANCELLED
     */
    Optional<Throwable> error(Task<?> task);
}
