package io.hts.engine.run;

import io.hts.engine.graph.TaskState;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The futures of {@code run.whenDone(task)}: completed with the task's result when it succeeded,
 * exceptionally with its cause when it failed or was cancelled.
 *
 * <p><b>No missed completion (a Dekker pair).</b> A watcher first publishes its future (a
 * concurrent map) and then the volatile flag {@code any}, then reads the task's state (volatile);
 * the thread that ends the task first changes the state (a compare-and-set, volatile), then reads
 * {@code any} (volatile). Volatile accesses are totally ordered, so at least one of the two sees
 * the other's write: either the watcher sees the final state and completes its own future, or the
 * ender sees the flag and completes it. Completing twice is harmless (the first value stays, and
 * both are the same). With no watcher the ender pays one volatile read. A dynamic task that waits
 * for a static one is told of its end through the same pair ({@link #dependents}).
 */
final class TaskWatchers {

    /** What the watchers read of the run: states, results and causes. */
    interface Outcomes {

        TaskState state(int i);

        @Nullable
        Object resultOf(int i);

        @Nullable
        Throwable errorOf(int i);
    }

    private final Outcomes outcomes;
    private final Scheduler scheduler;
    private final Map<Integer, CompletableFuture<@Nullable Object>> futures = new ConcurrentHashMap<>();
    private volatile boolean any;
    /**
     * The run's dynamic tasks once one depends on a static task: every static end is told to them.
     * Written before {@code any} (see {@link #dependents}), read after it.
     */
    private @Nullable DynamicTasks dependents;

    TaskWatchers(Outcomes outcomes, Scheduler scheduler) {
        this.outcomes = outcomes;
        this.scheduler = scheduler;
    }

    /** The future of task {@code i}, completed already when the task is final. */
    CompletableFuture<@Nullable Object> watch(int i) {
        CompletableFuture<@Nullable Object> f = futures.computeIfAbsent(i, k -> new CompletableFuture<>());
        any = true;
        complete(i, f);
        return f;
    }

    /** Called by the thread that ended task {@code i}, after its terminal transition and its result or cause. */
    void ended(int i) {
        if (any) {
            CompletableFuture<@Nullable Object> f = futures.get(i);
            if (f != null) {
                complete(i, f);
            }
            DynamicTasks d = dependents;
            if (d != null) {
                d.staticEnded(i);
            }
        }
    }

    /**
     * A dynamic task was made to wait for a static one ({@link DynamicTasks#dependOnStatic}): from
     * now on the static tasks' ends are told to {@code d}. Called after the edge is pushed and
     * before the static task's state is read: the Dekker pair of the class comment, with the edge
     * in place of the future.
     */
    void dependents(DynamicTasks d) {
        dependents = d;
        any = true;
    }

    private void complete(int i, CompletableFuture<@Nullable Object> f) {
        TaskState s = outcomes.state(i);
        if (s == TaskState.SUCCEEDED) {
            Object result = outcomes.resultOf(i);
            UserCode.run(scheduler, () -> f.complete(result)); // the future's dependent stages run here
        } else if (s.isTerminal()) {
            Throwable cause = outcomes.errorOf(i);
            Throwable end = cause != null ? cause : new IllegalStateException("task " + s);
            UserCode.run(scheduler, () -> f.completeExceptionally(end));
        }
    }
}
