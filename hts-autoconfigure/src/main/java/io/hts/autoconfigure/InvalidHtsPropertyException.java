package io.hts.autoconfigure;

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
        super("Invalid value '" + value + "' for property '" + property + "': accepted is " + accepted);
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
