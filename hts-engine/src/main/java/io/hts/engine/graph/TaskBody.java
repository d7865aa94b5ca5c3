package io.hts.engine.graph;

import org.jspecify.annotations.Nullable;

/**
 * The CPU implementation of a task.
 *
 * @param <T> the task's result type
 */
@FunctionalInterface
public interface TaskBody<T extends @Nullable Object> {

    /**
     * Computes the task's result.
     *
     * @param ctx gives the results of upstream tasks and the cancellation state
     * @return the result, which downstream tasks read with {@link TaskContext#input(Task)}
     * @throws Exception a failure: the task is retried if so configured, otherwise it fails
     */
    T run(TaskContext ctx) throws Exception;
}
