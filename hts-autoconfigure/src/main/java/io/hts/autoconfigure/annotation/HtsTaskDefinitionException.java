package io.hts.autoconfigure.annotation;

/**
 * An {@link HtsTask} method that cannot become a task: the message names the method, what is wrong
 * and what would be accepted. Fails start-up.
 */
public class HtsTaskDefinitionException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String method;

    /**
     * Creates the exception.
     *
     * @param method the method, as {@code Class.method(parameter types)}
     * @param message what is wrong with it
     */
    public HtsTaskDefinitionException(String method, String message) {
        super("@HtsTask method " + method + ": " + message);
        this.method = method;
    }

    /** The offending method. */
    public String method() {
        return method;
    }
}
