package io.hts.engine.graph;

import java.util.concurrent.CancellationException;

/** Thrown by {@link TaskContext#checkCancelled()}, and recorded as the cause of a cancelled task. */
public class TaskCancelledException extends CancellationException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was cancelled and why
     */
    public TaskCancelledException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause (the failure that led to the cancellation).
     *
     * @param message what was cancelled and why
     * @param cause the upstream failure
     */
    public TaskCancelledException(String message, Throwable cause) {
        super(message);
        initCause(cause);
    }
}
