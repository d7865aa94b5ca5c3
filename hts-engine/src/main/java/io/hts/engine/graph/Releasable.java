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

    /**
     * Runs {@code action} once the resource has really been given back (at once when it has been
     * already), on the thread that gives it back, whoever releases it. The run uses it to hold a
     * task's declared {@code gpu-memory} reservation as long as the device buffer it returned.
     *
     * @param action what to run; it must not throw and must return quickly
     * @return {@code false} when this resource cannot report its release (the default), in which
     *     case {@code action} is never run
     */
    default boolean whenReleased(Runnable action) {
        return false;
    }
}
