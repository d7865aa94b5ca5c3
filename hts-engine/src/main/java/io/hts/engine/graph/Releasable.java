package io.hts.engine.graph;

/**
 * A task result that holds a resource, such as device memory ({@code DeviceBuffer} of
 * {@code hts-gpu}). In a graph with GPU bodies, the run releases such a result when nothing can
 * read it any more: every task that depends on it has ended (succeeded, a GPU consumer once its
 * device work has completed; failed; or been cancelled) and no timed-out attempt of one of them
 * still runs (an abandoned body may still read its inputs), so intermediate device buffers return
 * to their pool without user code. The result of a task nothing depends on is the caller's: read
 * it with {@code run.result(task)} and release it. The result a timed-out body returns late is
 * released when it returns.
 */
public interface Releasable {

    /** Releases the resource; called at most once by the run, and must be idempotent. */
    void release();
}
