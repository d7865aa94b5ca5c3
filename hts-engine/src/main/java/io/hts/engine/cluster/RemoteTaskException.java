package io.hts.engine.cluster;

import java.util.Objects;

/**
 * A task's body failed on another member: the failure as the worker reported it. The message names
 * the task, the member and the remote exception; {@link #remoteStackTrace()} is the worker's trace.
 */
public final class RemoteTaskException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String member;
    private final SliceResult.RemoteFailure failure;

    /**
     * Creates the exception.
     *
     * @param member the member that ran the body
     * @param failure what it reported
     */
    public RemoteTaskException(String member, SliceResult.RemoteFailure failure) {
        super("task '" + failure.task() + "' failed on " + member + ": " + failure.exceptionClass()
                + (failure.message().isEmpty() ? "" : ": " + failure.message()));
        this.member = Objects.requireNonNull(member, "member");
        this.failure = failure;
    }

    /** The member that ran the body. */
    public String member() {
        return member;
    }

    /** The class name of the exception the body threw there. */
    public String remoteExceptionClass() {
        return failure.exceptionClass();
    }

    /** The worker's stack trace of it. */
    public String remoteStackTrace() {
        return failure.stackTrace();
    }
}
