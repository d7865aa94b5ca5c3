package io.hts.autoconfigure;

import org.jspecify.annotations.Nullable;

/**
 * An {@code hts.*} property whose value HTS cannot use: names the property, the value and what
 * would be accepted. {@link HtsFailureAnalyzer} turns it into Spring Boot's start-up report.
 */
public class InvalidHtsPropertyException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String property;
    private final transient Object value;
    private final String accepted;

    /**
     * Creates the exception.
     *
     * @param property the property, e.g. {@code hts.executor.threads}
     * @param value its value
     * @param accepted what is accepted, e.g. {@code an integer of at least 1}
     */
    public InvalidHtsPropertyException(String property, Object value, String accepted) {
        this(property, value, accepted, null);
    }

    /**
     * Creates the exception with the error that makes the value unusable here.
     *
     * @param property the property, e.g. {@code hts.gpu.enabled}
     * @param value its value
     * @param accepted what is accepted, and why when it depends on the machine
     * @param cause the error behind it (e.g. the GPU's failure to start), or {@code null}
     */
    public InvalidHtsPropertyException(String property, Object value, String accepted, @Nullable Throwable cause) {
        super("Invalid value '" + value + "' for property '" + property + "': accepted is " + accepted, cause);
        this.property = property;
        this.value = value;
        this.accepted = accepted;
    }

    /** The property. */
    public String property() {
        return property;
    }

    /** The value that was refused. */
    public Object value() {
        return value;
    }

    /** What would be accepted. */
    public String accepted() {
        return accepted;
    }
}
