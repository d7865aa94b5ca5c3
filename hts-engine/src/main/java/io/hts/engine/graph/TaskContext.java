package io.hts.engine.graph;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a running task body can see: its identity, the results of the tasks it depends on, and
 * whether its run has been cancelled.
 */
public interface TaskContext {

    /** The task's name. */
    String taskName();

    /** The name of the task's graph. */
    String graphName();

    /** The id of the run this execution belongs to. */
    long runId();

    /** The attempt number, 1 for the first execution and one more for each retry. */
    int attempt();

    /** The device this body runs on. */
    Device device();

    /** The task's index in its {@link TaskGroup}, or -1 when it is not a group member. */
    int groupIndex();

    /**
     * The result of a task this task depends on.
     *
     * @param upstream a direct dependency of this task
     * @param <U> its result type
     * @return its result (may be {@code null} when that task returned {@code null})
     * @throws IllegalArgumentException when {@code upstream} is not a direct dependency of this task
     */
    <U extends @Nullable Object> U input(Task<U> upstream);

    /**
     * The results of a group this task depends on, in index order.
     *
     * @param upstream a group whose members are all direct dependencies of this task
     * @param <U> the members' result type
     * @return the results, in index order
     * @throws IllegalArgumentException when a member is not a direct dependency of this task
     */
    <U extends @Nullable Object> List<U> inputs(TaskGroup<U> upstream);

    /**
     * Whether the run (or this task) has been cancelled, or the task has timed out. Long bodies
     * should check this and return early; the thread is also interrupted.
     */
    boolean isCancelled();

    /**
     * Runs another graph on this task's scheduler and waits for it. The waiting worker runs other
     * ready tasks meanwhile (the new run's among them), so a body may do this on a pool of one
     * worker, and any number of bodies may at once. The run belongs to this attempt: when this
     * task is cancelled or times out, the run is cancelled too and this call returns soon after.
     * Only a CPU body may wait this way.
     *
     * <p>Safe to wait for inside a body: this, and {@code GraphRun.await()} of any HTS run (the
     * worker helps the same way). Not safe: blocking on something that only another task of the
     * same pool completes ({@code CompletableFuture.join()}, a latch, a lock held across tasks):
     * such a wait holds its worker, and with every worker held that way the pool stops.
     *
     * @param graph the graph to run
     * @return the finished run, when every task succeeded
     * @throws RuntimeException a {@code GraphRunException} when a task of that run failed or the
     *     run was cancelled
     * @throws IllegalStateException when called from a GPU body
     */
    RunResults execute(TaskGraph graph);

    /**
     * Throws when {@link #isCancelled()} is true.
     *
     * @throws TaskCancelledException when the task should stop
     */
    default void checkCancelled() {
        if (isCancelled()) {
            throw new TaskCancelledException("task '" + taskName() + "' of run " + runId() + " was cancelled");
        }
    }
}
