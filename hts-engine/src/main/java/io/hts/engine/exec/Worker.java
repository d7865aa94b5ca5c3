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
