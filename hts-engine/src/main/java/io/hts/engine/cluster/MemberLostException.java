package io.hts.engine.cluster;

/**
 * A member left, crashed or could not be reached before it answered a slice: the coordinator sends
 * the slice elsewhere. A {@link ClusterEngine} fails a submitted slice with it.
 */
public final class MemberLostException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was lost, naming the member
     * @param cause the engine's own exception, or {@code null}
     */
    public MemberLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
