package io.hts.engine.observe;

/**
 * Receives {@link TaskEvent}s, synchronously on the thread where the state changed (a worker, a
 * backend thread or the timer). Keep it short; hand heavy work to another thread. Whatever it
 * throws is caught, counted and logged; it never breaks scheduling.
 */
@FunctionalInterface
public interface TaskListener {

    /**
     * Called for each event.
     *
     * @param event the event
     */
    void onEvent(TaskEvent event);

    /**
     * Whether this listener wants the routine events every successful task produces (ready,
     * started, succeeded). Returning {@code false} lets the scheduler skip producing them when no
     * one else wants them.
     */
    default boolean wantsRoutineEvents() {
        return true;
    }
}
