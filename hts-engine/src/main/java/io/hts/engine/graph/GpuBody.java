package io.hts.engine.graph;

import org.jspecify.annotations.Nullable;

/**
 * The GPU implementation of a task, run by the GPU execution backend.
 *
 * @param <T> the task's result type
 */
@FunctionalInterface
public interface GpuBody<T extends @Nullable Object> {

    /**
     * Computes the task's result on a GPU.
     *
     * @param ctx the task context, with the device, stream and memory of the backend (see
     *     {@link GpuTaskContext#unwrap(Class)})
     * @return the result
     * @throws Exception a failure: the task is retried if so configured, otherwise it fails
     */
    T run(GpuTaskContext ctx) throws Exception;
}
