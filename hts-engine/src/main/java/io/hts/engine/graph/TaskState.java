package io.hts.engine.graph;

/**
 * The states of a task within one run.
 *
 * <pre>
 * CREATED -&gt; READY -&gt; RUNNING -&gt; SUCCEEDED | FAILED | CANCELLED
 *                       RUNNING -&gt; RETRYING -&gt; READY
 * CREATED | READY | RETRYING -&gt; CANCELLED
 * </pre>
 */
public enum TaskState {

    /** Waiting for its dependencies. */
    CREATED,

    /** Dependencies done; queued for a device (or waiting for resources). */
    READY,

    /** Its body is running. */
    RUNNING,

    /** Failed, waiting for its backoff before it is queued again. */
    RETRYING,

    /** Finished with a result. */
    SUCCEEDED,

    /** Failed for good (retries exhausted, not retryable, or timed out). */
    FAILED,

    /** Will not run: the run or the task was cancelled, or an upstream task failed. */
    CANCELLED;

    private static final TaskState[] VALUES = values();

    /** Whether this is a final state. */
    public boolean isTerminal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }

    /**
     * The state with an ordinal.
     *
     * @param ordinal the ordinal
     * @return the state
     */
    public static TaskState of(int ordinal) {
        return VALUES[ordinal];
    }
}
