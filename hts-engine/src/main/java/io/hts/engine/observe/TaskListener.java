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
     * one else wants them. Asked once, when the listener is added; a listener that throws here is
     * counted as failing once and gets every event.
     */
    default boolean wantsRoutineEvents() {
        return true;
    }

    /**
     * Called once for every run that finished, with its final profile (with per-task timings only
     * when profiling is on), on the thread that ended the run, before the run's
     * {@code RUN_SUCCEEDED}, {@code RUN_FAILED} or {@code RUN_CANCELLED} event: what reads every
     * run (metrics) reads it here, whether or not the profiler keeps the run, and however many
     * runs end at once. Isolated like {@link #onEvent}: what it throws is logged, never passed on.
     *
     * @param profile the run's final profile
     */
    default void onRunFinished(RunProfile profile) {}
}
