package io.hts.engine.exec.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A worker thread of a {@link WorkStealingPool}. It owns one {@link WorkStealingDeque}: tasks it
 * pushes go to the bottom of its own deque, where it pops them again (LIFO, cache-warm) while idle
 * workers steal from the top (FIFO, the oldest and usually largest pieces of work). A spare worker
 * (started while a worker is blocked in a nested wait it cannot help with) pushes to the pool's
 * shared queue instead, and ends with that wait.
 *
 * <p>Fields written on every task ({@code current}, the hand-off time, the batch) are written only
 * by this worker; others read {@code current} and the suspended tasks with acquire.
 *
 * <p><b>Running frames.</b> A body that waits inside {@link WorkStealingPool#helpUntil} moves from
 * {@code current} into {@code suspended[d]} ({@link #enterHelp}) and back ({@link #exitHelp}) while
 * this worker runs nested tasks in {@code current}. Invariant: at every moment outside such a move,
 * each body running on this worker is {@code current} or one of {@code suspended[0..helpDepth)}.
 * A visitor ({@link #forEachRunning}, the only way a cancel reaches a waiting body) must see each
 * body at least once, so the moves are bracketed by {@code frameVersion}, a sequence lock written
 * only by this worker: odd during a move, even outside. A visitor reads the version, the frames
 * (acquire) and the version again, and retries until both readings are the same even number: its
 * snapshot then holds no half-made move. A nested task's {@code setCurrent} needs no bracket: it
 * follows the move that suspended its outer body, and a visitor that reads it (acquire) also reads
 * the version written after that move. Moves happen once per nested wait, never per task.
 */
public final class Worker extends Thread {

    private static final VarHandle CURRENT;
    private static final VarHandle SUSPENDED = MethodHandles.arrayElementVarHandle(PoolTask[].class);

    static {
        try {
            CURRENT = MethodHandles.lookup().findVarHandle(Worker.class, "current", PoolTask.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** The deepest nesting of helping waits on one worker; deeper waits block, compensated by a spare. */
    static final int MAX_HELP_DEPTH = 32;

    /** The largest batch a worker holds before adding it. */
    static final int MAX_BATCH = 256;

    private final WorkStealingPool pool;
    private final int index;
    final boolean spare;
    /** For a spare: the wait it stands in for is over; it ends after its current task. */
    volatile boolean retired;

    final WorkStealingDeque<PoolTask> deque = new WorkStealingDeque<>();
    final WorkerCounters counters = new WorkerCounters();
    final IdleWorkers.@Nullable Slot idle;

    /** The task being run, for {@link WorkStealingPool#forEachRunning}; release/acquire access. */
    private @Nullable PoolTask current;
    /** Tasks whose bodies wait in {@link WorkStealingPool#helpUntil}, outermost first; release/acquire. */
    private final PoolTask[] suspended = new PoolTask[MAX_HELP_DEPTH];
    /** How many entries of {@code suspended} are in use; written by this worker only. */
    private volatile int helpDepth;
    /** Odd while a body moves between {@code current} and {@code suspended}; written by this worker only. */
    private volatile int frameVersion;
    /** State of the xorshift generator choosing steal victims. */
    int victimSeed;
    /** Scans made, for the periodic look at the external queue. */
    int scans;
    /** The counter this worker batches additions for, and the additions not yet added. */
    private @Nullable BatchedCount batchTarget;

    private int batched;

    /**
     * See {@link #handOffNanos(long)}: the end of the last task and its owner's token; owner 0
     * when not valid. Primitive fields: written on every task, and a reference store would cost a
     * GC write barrier each time.
     */
    private long handOffNanos;

    private long handOffOwner;
    /** The end time the running task reported, and its owner; the owner cleared before each task. */
    private long endNanos;

    private long endOwner;

    Worker(WorkStealingPool pool, int index, String name, IdleWorkers.@Nullable Slot idle, boolean spare) {
        super(name);
        this.pool = pool;
        this.index = index;
        this.idle = idle;
        this.spare = spare;
        this.victimSeed = 0x9E3779B9 * (index + 1);
        setDaemon(true); // a pool never keeps the JVM alive: its owner closes it
    }

    /** The position of this worker in its pool, from 0 (spares come after the regular workers). */
    public int index() {
        return index;
    }

    /** The pool this worker belongs to. */
    public WorkStealingPool pool() {
        return pool;
    }

    /**
     * Pushes a task onto this worker's own deque (a spare's go to the pool's shared queue). Must
     * be called from this worker's thread.
     *
     * @param task the task
     */
    public void push(PoolTask task) {
        if (spare) {
            pool.submitShared(task, true);
        } else if (deque.push(task)) {
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
     * Adds the local batch to its counter now, unless the coming work belongs to the same counter.
     * Must be called from this worker's thread.
     *
     * @param next the counter the coming work belongs to; the batch is kept when it is the same
     */
    public void flushCountsUnless(@Nullable BatchedCount next) {
        if (batchTarget != next) {
            flushCounts();
        }
    }

    /**
     * Adds the local batch to its counter now: before this worker may be held up inside a body
     * whose task another thread can end (a time limit). The pool calls it before the worker idles
     * or waits. Must be called from this worker's thread.
     */
    public void flushCounts() {
        BatchedCount target = batchTarget;
        int n = batched;
        batchTarget = null;
        batched = 0;
        if (target != null && n > 0) {
            target.add(n);
        }
    }

    /**
     * When this worker goes straight from the task of {@code owner} it ran last to the one it runs
     * now (that task's continuation, or a task from its own deque), and no user code ran in between
     * (see {@link #pausedBetweenTasks()}), the clock reading that ended that task; else 0. A
     * profiler takes it as the new task's start instead of reading the clock again. Must be called
     * from this worker's thread.
     *
     * @param owner who asks: a token unique among the owners of this pool's tasks (a run's id),
     *     not 0; readings reported by another owner are not handed over
     */
    public long handOffNanos(long owner) {
        return handOffOwner == owner ? handOffNanos : 0;
    }

    /**
     * Reports the clock reading at which the running task ended, for the next task's
     * {@link #handOffNanos(long)}. Must be called from this worker's thread.
     *
     * @param nanos a {@link System#nanoTime()} reading
     * @param owner the token of the task's owner (its run's id), not 0
     */
    public void taskEndedAt(long nanos, long owner) {
        endNanos = nanos;
        endOwner = owner;
    }

    /**
     * The next task's start must be read afresh: the worker paused, stole, took shared or urgent
     * work, or user code (a listener, a policy) ran on it. Must be called from this worker's thread.
     */
    public void pausedBetweenTasks() {
        handOffNanos = 0;
        handOffOwner = 0;
        endOwner = 0;
    }

    /** Before a task runs: what it reports is its own. */
    void beforeTask() {
        endOwner = 0;
    }

    /** After a task ran: the next task may start at its end, unless the worker pauses first. */
    void afterTask() {
        handOffNanos = endNanos;
        handOffOwner = endOwner;
    }

    void setCurrent(@Nullable PoolTask task) {
        CURRENT.setRelease(this, task);
    }

    /**
     * The task this worker runs (or has just run); while it helps inside a body's wait, the nested
     * task it runs.
     *
     * @return the task, or {@code null} while idle
     */
    public @Nullable PoolTask current() {
        return (PoolTask) CURRENT.getAcquire(this);
    }

    /** A body of {@code outer} starts waiting (and helping); false when the nesting is too deep to help. */
    boolean enterHelp(@Nullable PoolTask outer) {
        int d = helpDepth;
        if (d == MAX_HELP_DEPTH) {
            return false;
        }
        int v = frameVersion;
        frameVersion = v + 1;
        SUSPENDED.setRelease(suspended, d, outer);
        helpDepth = d + 1;
        frameVersion = v + 2;
        return true;
    }

    /** The wait of {@code outer} is over: it is the running task again. */
    void exitHelp(@Nullable PoolTask outer) {
        int v = frameVersion;
        frameVersion = v + 1;
        int d = helpDepth - 1;
        helpDepth = d;
        SUSPENDED.setRelease(suspended, d, null);
        setCurrent(outer);
        frameVersion = v + 2;
        pausedBetweenTasks();
    }

    /**
     * Calls {@code action} for each task whose body runs on this worker: the ones waiting in
     * {@link WorkStealingPool#helpUntil}, outermost first, then the one it runs; each at least
     * once, from one consistent snapshot (see the class comment), and none twice.
     */
    void forEachRunning(Consumer<PoolTask> action) {
        PoolTask[] frames = new PoolTask[MAX_HELP_DEPTH + 1];
        int n;
        for (int tries = 0; ; tries++) {
            int v = frameVersion;
            if ((v & 1) != 0) {
                waitOutMove(tries);
                continue;
            }
            n = 0;
            for (int d = 0, depth = helpDepth; d < depth; d++) {
                PoolTask t = (PoolTask) SUSPENDED.getAcquire(suspended, d);
                if (t != null) {
                    frames[n++] = t;
                }
            }
            PoolTask t = current();
            if (t != null && (n == 0 || frames[n - 1] != t)) {
                frames[n++] = t;
            }
            if (frameVersion == v) {
                break;
            }
        }
        for (int i = 0; i < n; i++) {
            action.accept(frames[i]);
        }
    }

    /** A move is a few stores; this worker's thread may have been descheduled in the middle of one. */
    private static void waitOutMove(int tries) {
        if (tries < 64) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }

    int helpDepth() {
        return helpDepth;
    }

    @Override
    public void run() {
        pool.runWorker(this);
    }
}
