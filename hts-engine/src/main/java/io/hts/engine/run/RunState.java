package io.hts.engine.run;

import io.hts.engine.exec.internal.BatchedCount;
import io.hts.engine.graph.RunStatus;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * A run's own state: how many tasks are not yet final, whether it was cancelled or is stopping,
 * its failures, and its status; and the rule by which it finishes.
 *
 * <h2>The counting protocol</h2>
 *
 * <p>{@code pending} starts at the number of tasks. Every terminal transition of a task (see
 * {@link DependencyManager}) is won by exactly one thread, and that thread, and only it,
 * contributes exactly one to the count: either at once ({@link #counted(int)}; a sweep that
 * cancelled k tasks contributes k after it has done their bookkeeping), or, for a task that
 * succeeded on a CPU worker, through the worker's local batch (this class is the batch's
 * {@link BatchedCount}), which the worker adds here when the batch is full, before it runs work of
 * another counter, before it runs a body under a time limit of this run, before it waits (a
 * helping wait) and before it idles.
 *
 * <p><b>Never early.</b> {@code pending} reaches zero only after n contributions, each made after
 * its task's terminal transition by the one thread that won it; so when it reaches zero every
 * task is final and every winner has finished its bookkeeping (results, causes, events,
 * propagation, releases), which happened before its contribution. A count that would go below
 * zero is a broken invariant and throws.
 *
 * <p><b>Never never.</b> A contribution held in a worker's batch is added in bounded time once
 * every task of the run is final: the worker holding it is either idle (it added the batch before
 * idling), running work of another counter (added before), inside a body of this run's task
 * (that task is not final unless a time limit ended it, and the worker added the batch before
 * starting a timed body, or unless it waits inside the body, and it added the batch before
 * waiting), or between two tasks (bounded). Contributions outside batches are added at once.
 *
 * <p><b>Run-level races.</b> {@link #requestCancel()} and {@link #claimFinish()} race for the run's
 * phase with one compare-and-set each: a cancel that wins makes the outcome CANCELLED (or FAILED
 * when a task failed), and then returns true; a cancel that loses returns false and changes
 * nothing. The thread whose contribution brought {@code pending} to zero finishes the run; it is
 * the only one that calls {@link #claimFinish()}. The stop cause (the first failure of a
 * fail-fast run, or the run's cancellation) is set once by compare-and-set; every task cancelled
 * because the run stops gets it as its cause.
 */
final class RunState implements BatchedCount {

    private static final VarHandle PENDING;
    private static final VarHandle PHASE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PENDING = l.findVarHandle(RunState.class, "pending", int.class);
            PHASE = l.findVarHandle(RunState.class, "phase", int.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private static final int ACTIVE = 0;
    private static final int CANCELLING = 1;
    private static final int FINISHED = 2;

    private final GraphRun run;
    private final AtomicReference<@Nullable Throwable> stopCause = new AtomicReference<>();
    private final ConcurrentLinkedQueue<TaskFailure> failures = new ConcurrentLinkedQueue<>();
    private volatile int pending;
    private volatile int phase = ACTIVE;
    private volatile boolean anyCancelled;
    private volatile RunStatus status = RunStatus.RUNNING;

    RunState(GraphRun run, int tasks) {
        this.run = run;
        this.pending = tasks;
    }

    /** Tasks not yet counted as final. */
    int pending() {
        return pending;
    }

    /** A worker adds its batch of tasks that succeeded on it. */
    @Override
    public void add(int count) {
        counted(count);
    }

    /**
     * Counts tasks whose terminal transition the caller won; the call that brings the count to
     * zero finishes the run.
     *
     * @param count how many, 0 or more
     */
    void counted(int count) {
        if (count <= 0) {
            return;
        }
        int left = (int) PENDING.getAndAdd(this, -count) - count;
        if (left == 0) {
            run.finish();
        } else if (left < 0) {
            throw new IllegalStateException(run + ": " + (-left) + " task ends counted twice; this is a bug in HTS");
        }
    }

    /** Records that some task was cancelled (the run's outcome is at least CANCELLED). */
    void taskCancelled() {
        anyCancelled = true;
    }

    /** Records a task that failed for good; only the winner of its FAILED transition calls it. */
    void failed(TaskFailure failure) {
        failures.add(failure);
    }

    /** The failures so far, first failure first. */
    List<TaskFailure> failures() {
        return List.copyOf(failures);
    }

    /**
     * Makes the run stop: nothing new starts. Only the first call sets the cause.
     *
     * @param cause why (the first failure of a fail-fast run, or the cancellation)
     * @return whether this call set it (its caller sweeps the not-started tasks)
     */
    boolean stop(Throwable cause) {
        return stopCause.compareAndSet(null, cause);
    }

    /** Why the run stops, or {@code null} while it does not. */
    @Nullable
    Throwable stopCause() {
        return stopCause.get();
    }

    /** Whether the run was cancelled by {@link GraphRun#cancel()} (and the cancel won). */
    boolean cancelRequested() {
        return phase == CANCELLING;
    }

    /**
     * The run's cancellation against its finish: one compare-and-set.
     *
     * @return whether the cancel won (the run had not finished and was not cancelled before)
     */
    boolean requestCancel() {
        return PHASE.compareAndSet(this, ACTIVE, CANCELLING);
    }

    /**
     * Decides the outcome, once, by the thread that brought the count to zero.
     *
     * @return the outcome
     */
    RunStatus claimFinish() {
        int before = (int) PHASE.getAndSet(this, FINISHED);
        if (before == FINISHED) {
            throw new IllegalStateException(run + " finished twice; this is a bug in HTS");
        }
        if (!failures.isEmpty()) {
            return RunStatus.FAILED;
        }
        return before == CANCELLING || anyCancelled ? RunStatus.CANCELLED : RunStatus.SUCCEEDED;
    }

    /** Publishes the final status (after the profile and before the run's future completes). */
    void publish(RunStatus outcome) {
        status = outcome;
    }

    RunStatus status() {
        return status;
    }

    // ================================================================== tasks added while the run runs

    /**
     * One more task to count: a task about to be added to the running run ({@link DynamicTasks}),
     * counted before anyone can see it, so that the run cannot finish while it is not final; its
     * end contributes one as any task's does. Refused once the count reached zero: the run has
     * finished (or its finisher is on its way), and a count never rises from zero, so a run that
     * finished stays finished. An adder holding a task of the run that is not final finds the count
     * above zero; this compare-and-set makes the refusal safe for any other caller too.
     *
     * @return whether the task is counted (false: the run has finished)
     */
    boolean reserve() {
        while (true) {
            int p = (int) PENDING.getVolatile(this);
            if (p <= 0 || p == Integer.MAX_VALUE) {
                return false;
            }
            if (PENDING.compareAndSet(this, p, p + 1)) {
                return true;
            }
        }
    }
}
