package io.hts.engine.run.internal;

import io.hts.engine.graph.internal.CompiledGraph;
import org.jspecify.annotations.Nullable;

/**
 * The kernel's view of one run, given to its {@link RunExtension}. Implemented by the kernel;
 * every method may be called on any thread.
 */
public interface RunHandle {

    /** The run's id, unique within its scheduler. */
    long runId();

    /** The compiled graph the run runs (tasks by index, topology, name). */
    CompiledGraph graph();

    /**
     * The result of task {@code i}, which must have SUCCEEDED: a dependency of an attempt handed
     * to the extension. Its transition to SUCCEEDED (a compare-and-set after the store) published it.
     *
     * @param i the task
     * @return its result
     */
    @Nullable
    Object resultOf(int i);

    /** Why the run stops (cancelled, or failed fast), or null while it goes on. */
    @Nullable
    Throwable stopCause();

    /**
     * Whether task {@code i} itself was asked to stop ({@code run.cancel(task)} or its group); the
     * request is recorded before the task's state is looked at, so a canceller sees it.
     *
     * @param i the task
     * @return whether its cancellation was requested
     */
    boolean cancelRequested(int i);
}
