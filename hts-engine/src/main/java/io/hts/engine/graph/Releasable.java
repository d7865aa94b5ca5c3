package io.hts.engine.graph;

/**
 * A task result that holds a resource, such as device memory ({@code DeviceBuffer} of
 * {@code hts-gpu}). In a graph with GPU bodies, the run releases such a result as soon as every
 * task that depends on it has succeeded (a GPU consumer: once its device work has completed), and
 * when the run ends it releases those whose consumers failed or were cancelled, so intermediate
 * device buffers return to their pool without user code. The result of a task nothing depends on
 * is the caller's: read it with {@code run.result(task)} and release it. A result read by a task
 * whose time limit passed while its body still runs is not released by the run (the body may
 * still use it); the result a timed-out body returns late is released when it returns.
 */
public interface Releasable {

    /** Releases the resource; called at most once by the run, and must be idempotent. */
    void release();
}
