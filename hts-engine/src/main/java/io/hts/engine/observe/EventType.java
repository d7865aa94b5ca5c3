package io.hts.engine.observe;

/** What a {@link TaskEvent} reports. */
public enum EventType {

    /** A run was submitted. */
    RUN_SUBMITTED(false),
    /** Every task of a run succeeded. */
    RUN_SUCCEEDED(false),
    /** A run finished with at least one failed task. */
    RUN_FAILED(false),
    /** A run finished cancelled. */
    RUN_CANCELLED(false),
    /** A run made no progress for the configured stall time (the watchdog's report). */
    RUN_STALLED(false),

    /** A task's dependencies are done; it is queued (CREATED or RETRYING to READY). */
    TASK_READY(true),
    /** The policy chose a device for a task that could run on several; carries the decision. */
    TASK_PLACED(false),
    /** A ready task waits for resources to be free. */
    TASK_WAITING(false),
    /** A task's body started (READY to RUNNING). */
    TASK_STARTED(true),
    /** A task succeeded. */
    TASK_SUCCEEDED(true),
    /** An attempt failed and will be retried after a backoff (RUNNING to RETRYING). */
    TASK_RETRYING(false),
    /** A task failed for good. */
    TASK_FAILED(false),
    /** A task was cancelled. */
    TASK_CANCELLED(false),
    /** An attempt ran past its time limit; its body is abandoned until it returns. */
    TASK_TIMED_OUT(false),
    /** The body of a timed-out attempt returned; its resources are released. */
    TASK_ABANDONED_RETURNED(false);

    private final boolean routine;

    EventType(boolean routine) {
        this.routine = routine;
    }

    /**
     * Whether this is one of the high-volume events every successful task produces (ready,
     * started, succeeded). They are produced only when someone wants them.
     */
    public boolean isRoutine() {
        return routine;
    }
}
