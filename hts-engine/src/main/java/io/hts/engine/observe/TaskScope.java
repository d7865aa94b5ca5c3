package io.hts.engine.observe;

/**
 * Something that surrounds every task body on the thread that runs it, a CPU worker or a device's
 * thread: a logging context, a tracing scope (the Spring Boot starter opens the run's observation
 * so that a body's own spans are its children). Registered with {@code SchedulerBuilder.taskScope}.
 *
 * <p>{@link #open} is called just before the body, {@link Scope#close()} just after it, on the same
 * thread, however the body ends. Both run on the task's path: keep them cheap. A scope that throws
 * is isolated (logged once, then at DEBUG): the body runs, and the task's outcome is the body's.
 */
@FunctionalInterface
public interface TaskScope {

    /**
     * Opens the scope of one body.
     *
     * @param runId the run
     * @param graph the graph's name
     * @param task the task's name
     * @return what to close when the body ends
     */
    Scope open(long runId, String graph, String task);

    /** An open scope. */
    @FunctionalInterface
    interface Scope {

        /** Nothing to close. */
        Scope NONE = () -> {};

        /** Closes it, on the thread that opened it. */
        void close();
    }
}
