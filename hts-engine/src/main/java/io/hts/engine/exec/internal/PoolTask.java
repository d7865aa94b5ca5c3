package io.hts.engine.exec.internal;

import org.jspecify.annotations.Nullable;

/**
 * A unit of work for the {@link WorkStealingPool}.
 *
 * <p>A task may hand the worker its continuation: the task to run next on the same worker without
 * passing through any queue (a chain of dependent tasks then runs as a loop on one thread, with no
 * queue traffic and no recursion).
 */
public abstract class PoolTask {

    /**
     * Runs this task on a worker of the pool. Must not throw: the pool reports anything thrown to
     * its uncaught-exception handler and goes on.
     *
     * @param worker the worker running the task
     * @return the task to run next on the same worker, or {@code null}
     */
    protected abstract @Nullable PoolTask execute(Worker worker);
}
