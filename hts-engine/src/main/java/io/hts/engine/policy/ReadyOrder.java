package io.hts.engine.policy;

/** How the CPU backend orders ready tasks. */
public enum ReadyOrder {

    /**
     * Tasks with a positive priority go first, highest first; the others run in work-stealing
     * order (newest first on the worker that made them ready, oldest first when stolen).
     */
    PRIORITY,

    /** Every ready task is ordered by priority, then by estimated cost, shortest first. */
    SHORTEST_FIRST
}
