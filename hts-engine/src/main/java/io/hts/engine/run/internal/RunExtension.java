package io.hts.engine.run.internal;

/**
 * An extension's part of one run (the slices of its distributed groups), made by
 * {@link GraphExtension#run}. Implemented by the extension; its methods are called by the kernel
 * only for tasks {@link GraphExtension#owns} answered true for, on the threads each says, and must
 * not throw (the kernel's bookkeeping goes on around them) nor block.
 */
public interface RunExtension {

    /**
     * An owned task's first attempt is READY. Called on the thread that won the task's CREATED to
     * READY compare-and-set (for a root, the submitting thread or a root seeder on a worker; else
     * the one that ended its last dependency: a worker, a device's or another member's completion
     * thread), so at most once per task and run. The extension now owns where the attempt goes
     * ({@link AttemptHandle}).
     *
     * @param attempt the attempt
     */
    void ready(AttemptHandle attempt);

    /**
     * An owned task's later attempt is READY (its previous attempt failed and its retry won the
     * task's RUNNING to RETRYING to READY compare-and-sets). Called on the scheduler's timer after
     * the backoff, or on the thread that ended the previous attempt; once per attempt.
     *
     * @param attempt the attempt
     */
    void retry(AttemptHandle attempt);

    /**
     * {@code run.cancel(task)} (or of its group) of an owned task that had started or ended: it
     * lost the task's transition to CANCELLED. Called on the canceller's thread after the request
     * is recorded ({@link RunHandle#cancelRequested}); an attempt running elsewhere may be failed
     * with {@code cause} now (the first report counts). May come more than once for a task.
     *
     * @param i the task
     * @param cause the cancellation
     */
    void cancelRemote(int i, Throwable cause);

    /**
     * An owned task was cancelled before it started: called by the thread that won its CREATED,
     * READY or RETRYING to CANCELLED compare-and-set, so once per task and run at most.
     *
     * @param i the task
     */
    void notStarted(int i);

    /**
     * The run was cancelled ({@code run.cancel()}, called by the winner of the run's cancel request)
     * or failed fast (called by the winner of the run's stop): what runs elsewhere stops and its
     * attempts end. Both may come, once each, so idempotent.
     *
     * @param cause the run's cancellation or the failure that stopped it
     */
    void cancelled(Throwable cause);

    /** The run ended: called once, on the thread that completes the run's future, after every task is final. */
    void finished();
}
