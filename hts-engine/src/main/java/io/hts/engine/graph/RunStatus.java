package io.hts.engine.graph;

/** The state of a whole run of a graph. */
public enum RunStatus {

    /** Tasks are still running or waiting. */
    RUNNING,

    /** Every task succeeded. */
    SUCCEEDED,

    /** At least one task failed. */
    FAILED,

    /** No task failed, but the run or some tasks were cancelled. */
    CANCELLED;

    /** Whether the run has finished. */
    public boolean isDone() {
        return this != RUNNING;
    }
}
