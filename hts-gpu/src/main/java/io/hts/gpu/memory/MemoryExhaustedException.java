package io.hts.gpu.memory;

/**
 * An allocation that could not be served: the request, and the allocator's or pool's state at
 * that moment (what was used, free, pending and the largest free block), so that "out of memory"
 * and "fragmented" can be told apart.
 */
public class MemoryExhaustedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final long requested;
    private final transient MemoryStatistics statistics;

    /**
     * Creates the exception.
     *
     * @param message what was refused and why
     * @param requested the bytes asked for
     * @param statistics the state when it was refused
     */
    public MemoryExhaustedException(String message, long requested, MemoryStatistics statistics) {
        super(message + " (" + statistics + ")");
        this.requested = requested;
        this.statistics = statistics;
    }

    /** The bytes asked for. */
    public long requested() {
        return requested;
    }

    /** The state of the allocator or pool when the request was refused. */
    public MemoryStatistics statistics() {
        return statistics;
    }
}
