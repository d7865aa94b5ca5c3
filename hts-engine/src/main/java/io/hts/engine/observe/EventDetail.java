package io.hts.engine.observe;

/** Which events the recent-events buffer keeps. */
public enum EventDetail {

    /** Every state change, including the routine ready / started / succeeded of every task. */
    ALL,

    /**
     * Run events, device decisions, resource waits, retries, failures, cancellations and
     * time-outs: everything but the routine events (the default; keeps the buffer useful and the
     * scheduling path fast).
     */
    NOTABLE,

    /** Nothing. */
    NONE;

    /**
     * Whether the buffer keeps events of a type at this detail.
     *
     * @param type the event type
     * @return whether it is kept
     */
    public boolean accepts(EventType type) {
        return this == ALL || (this == NOTABLE && !type.isRoutine());
    }
}
