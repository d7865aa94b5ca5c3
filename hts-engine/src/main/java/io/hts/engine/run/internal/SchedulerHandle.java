package io.hts.engine.run.internal;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What the kernel gives a scheduler's extension besides the scheduler's public API. Implemented by
 * the kernel; thread-safe, as the scheduler is.
 */
public interface SchedulerHandle {

    /**
     * The scheduler itself: its public API (submit, register, parallelism, cost model, GPU...).
     * Not to be called before {@link SchedulerExtension#started()}.
     */
    Scheduler scheduler();

    /**
     * Starts a run owed to active run {@code owedTo} of this scheduler (a slice of it that came
     * back to this member): admitted after a shutdown too, as that run's own work is.
     *
     * @param graph the graph
     * @param options the run's options
     * @param owedTo the id of the run it is owed to
     * @return the run, started
     * @throws RejectedExecutionException when the scheduler has drained already
     */
    GraphRun submitOwed(TaskGraph graph, RunOptions options, long owedTo);

    /** The scheduler's timer (time limits, retries' backoffs); tasks on it must not block. */
    ScheduledExecutorService timer();
}
