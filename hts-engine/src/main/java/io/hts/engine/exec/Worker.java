package io.hts.engine.exec;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jspecify.annotations.Nullable;

/**
 * A worker thread of a {@link WorkStealingPool}. It owns one {@link WorkStealingDeque}: tasks it
 * pushes go to the bottom of its own deque, where it pops them again (LIFO, cache-warm) while idle
 * workers steal from the top (FIFO, the oldest and usually largest pieces of work).
 */
public final class Worker extends Thread {

    private static final VarHandle CURRENT;

    static {
        try {
            CURRENT = MethodHandles.lookup().findVarHandle(Worker.class, "current", PoolTask.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final WorkStealingPool pool;
    private final int index;
    final WorkStealingDeque<PoolTask> deque = new WorkStealingDeque<>();
    final WorkerCounters counters = new WorkerCounters();

    /** Index + 1 of the next worker in the pool's idle stack; meaningful only while in the stack. */
    int nextIdle;
    /** Whether this worker is in the pool's idle stack; set by itself, cleared by the one who pops it. */
    volatile boolean inIdleStack;
    /** The task being run, for {@link WorkStealingPool#forEachRunning}; release/acquire access. */
    private @Nullable PoolTask current;
    /** State of the xorshift generator choosing steal victims. */
    int victimSeed;
    /** Scans made, for the periodic look at the external queue. */
    int scans;
    /** The counter this worker batches additions for, and the additions not yet added. */
    private @Nullable BatchedCount batchTarget;
    private int batched;

    /**
     * {@link System#nanoTime()} at the end of the task this worker ran last, while it goes
     * straight on to the next one (a continuation, its own deque, the priority lane); 0 after a
     * steal or an idle period. See {@link #handOffNanos()}.
     */
    private long handOffNanos;
    /** The end time the running task reported through {@link #taskEndedAt(long)}; 0 if none. */
    private long endNanos;

    /** The largest batch a worker holds before adding it. */
    static final int MAX_BATCH = 256;

    Worker(WorkStealingPool pool, int index, String name, boolean daemon) {
        super(name);
        this.pool = pool;
        this.index = index;
        this.victimSeed = 0x9E3779B9 * (index + 1);
        setDaemon(daemon);
    }

    /** The position of this worker in its pool, from 0. */
    public int index() {
        return index;
    }

    /** The pool this worker belongs to. */
    public WorkStealingPool pool() {
        return pool;
    }

    /**
     * Pushes a task onto this worker's own deque. Must be called from this worker's thread.
     *
     * @param task the task
     */
    public void push(PoolTask task) {
        if (deque.push(task)) {
            pool.signalWork();
        }
    }

    /**
     * Counts one for a shared counter, locally; the count reaches the counter in batches (see
     * {@link BatchedCount}). Must be called from this worker's thread.
     *
     * @param target the counter
     */
    public void countLocally(BatchedCount target) {
        if (batchTarget != target) {
            flushCounts();
            batchTarget = target;
        }
        if (++batched >= MAX_BATCH) {
            flushCounts();
        }
    }

    /**
     * Adds the local batch to its counter now. The pool calls it before the worker goes idle;
     * task code calls it before starting work that belongs to another counter. Must be called
     * from this worker's thread.
     *
     * @param next the counter the coming work belongs to; the batch is kept when it is the same
     */
    public void flushCountsUnless(@Nullable BatchedCount next) {
        if (batchTarget != next) {
            flushCounts();
        }
    }

    void flushCounts() {
        BatchedCount target = batchTarget;
        int n = batched;
        batchTarget = null;
        batched = 0;
        if (target != null && n > 0) {
            target.add(n);
        }
    }

    /**
     * When the task this worker runs now follows the previous one without a pause (its
     * continuation, or the next task of its own deque or of the priority lane), the clock reading
     * that ended the previous task, else 0. A profiler takes it as the new task's start instead of
     * reading the clock again: one clock read per task on a busy worker instead of two. The few
     * tens of nanoseconds the worker spends between the two tasks are counted in the new task's
     * time; after a steal or an idle period the value is 0 and the start is read afresh. Must be
     * called from this worker's thread.
     */
    public long handOffNanos() {
        return handOffNanos;
    }

    /**
     * Reports the clock reading at which the running task ended, for the next task's
     * {@link #handOffNanos()}. Must be called from this worker's thread.
     *
     * @param nanos a {@link System#nanoTime()} reading
     */
    public void taskEndedAt(long nanos) {
        endNanos = nanos;
    }

    /** Before a task runs: what it reports is its own. */
    void beforeTask() {
        endNanos = 0;
    }

    /** After a task ran: the next task may start at its end, unless the worker pauses first. */
    void afterTask() {
        handOffNanos = endNanos;
    }

    /** The worker paused (stole, polled the external queue or idled): the next start is read afresh. */
    void pausedBetweenTasks() {
        handOffNanos = 0;
    }

    void setCurrent(@Nullable PoolTask task) {
        CURRENT.setRelease(this, task);
    }

    @Nullable PoolTask current() {
        return (PoolTask) CURRENT.getAcquire(this);
    }

    @Override
    public void run() {
        pool.runWorker(this);
    }
}
