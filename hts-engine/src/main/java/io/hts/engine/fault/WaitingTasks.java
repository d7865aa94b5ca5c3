package io.hts.engine.fault;

import io.hts.engine.exec.DeviceTask;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tasks a {@link CircuitBreakingBackend} holds until its breaker and bulkhead let them on, in
 * dispatch order, and the one thread at a time (the drainer) that moves them on.
 *
 * <p><b>Invariants.</b>
 *
 * <ol>
 *   <li>A task this queue holds stays in it, as an entry, until it has been moved on (to the device,
 *       to the CPU) or failed: the drainer never takes a task out to put it back, so a closer always
 *       finds every task held.
 *   <li>Each entry has one owner per transition. {@code WAITING}: nobody's; the first
 *       compare-and-set away from it owns the task: the drainer's to {@code TRYING}, or a closer's or
 *       a run cancellation's to {@code GONE}, which then fails it. {@code TRYING}: the drainer's; it
 *       alone moves the entry on, to {@code WAITING} again (by compare-and-set: the task must wait) or
 *       to {@code GONE} once it moved the task on or failed it (a plain write: no other thread moves
 *       an entry out of {@code TRYING} or {@code DOOMED}, and a doom that lands just before asks for
 *       nothing the move did not do). {@code DOOMED}: still the drainer's, but
 *       a closer or a cancellation that found the entry {@code TRYING} asked, by compare-and-set, for
 *       its end: the drainer's compare-and-set back to {@code WAITING} then fails, and it fails the
 *       task instead of keeping it. {@code GONE} is final. So exactly one thread ends each task, and
 *       a task that must wait is put back only while no closer has passed it.
 *   <li>Once {@link #close} has won the closed flag (one compare-and-set; only its winner walks the
 *       queue), no entry stays {@code WAITING}: the walk takes each waiting entry and dooms each
 *       entry being tried; an entry added after the walk passed is tried by a drain that starts
 *       after the add and sees the flag, and fails it. A closed queue schedules no recheck, and
 *       one pending no longer reaches it.
 *   <li>One drainer at a time, and no drain request lost: the drain role is one word, {@code IDLE},
 *       {@code DRAINING} or {@code AGAIN}. A request either takes the role ({@code IDLE} to {@code
 *       DRAINING}) or, while another holds it, leaves it {@code AGAIN} (by compare-and-set); only the
 *       drainer leaves {@code DRAINING} (to {@code IDLE}, by compare-and-set) or {@code AGAIN} (to
 *       {@code DRAINING}: it passes over the queue once more), so a request made during a pass is
 *       served by another pass.
 * </ol>
 *
 * <p><b>Memory ordering.</b> Every shared variable here is an atomic or a concurrent deque, so
 * their accesses are sequentially consistent: a closer writes the flag then reads the queue, an adder
 * writes the queue then has a drain read the flag (the drain that serves its request reads the flag
 * after the request's compare-and-set), so one of them sees the other. The tasks themselves are
 * published through the deque.
 */
final class WaitingTasks {

    private static final Logger log = LoggerFactory.getLogger(WaitingTasks.class);

    /** What the drainer does with a task it holds, and why a task held is failed. */
    interface Router {

        /**
         * Moves a task on (to the device, to the CPU, or fails it) if the breaker and the bulkhead
         * allow; called by the drainer only.
         *
         * @return {@code false} when it did nothing with it: the task must wait
         */
        boolean route(DeviceTask task);

        /** Why a task held by a closed backend fails. */
        Throwable closedWhileWaiting(DeviceTask task);

        /** Why a task of a cancelled run fails here. */
        Throwable cancelledWhileWaiting(DeviceTask task);
    }

    private static final long RECHECK_MILLIS = 200;

    /** An entry's states (invariant 2). */
    private static final int WAITING = 0;

    private static final int TRYING = 1;
    private static final int DOOMED = 2;
    private static final int GONE = 3;

    /** The drain role's states (invariant 4). */
    private static final int IDLE = 0;

    private static final int DRAINING = 1;
    private static final int AGAIN = 2;

    private final Router router;
    private final ConcurrentLinkedDeque<Entry> queue = new ConcurrentLinkedDeque<>();
    private final AtomicInteger drain = new AtomicInteger(IDLE);
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean recheckScheduled = new AtomicBoolean();
    private final Recheck recheck = new Recheck(this);

    WaitingTasks(Router router) {
        this.router = router;
    }

    /** A task held here, and who owns it now. */
    private static final class Entry {

        final DeviceTask task;
        final AtomicInteger state = new AtomicInteger(WAITING);

        Entry(DeviceTask task) {
            this.task = task;
        }
    }

    /** Holds a task, behind those already here, and drains. */
    void add(DeviceTask task) {
        queue.addLast(new Entry(task));
        drain();
    }

    /** Whether no task is held (entries on their way out may still count). */
    boolean isEmpty() {
        return queue.isEmpty();
    }

    /** The tasks held, entries on their way out included. */
    int size() {
        return queue.isEmpty() ? 0 : queue.size();
    }

    boolean isClosed() {
        return closed.get();
    }

    /**
     * Moves the held tasks on, in order, until one must wait; the caller drains, or has the thread
     * that drains now go round again (invariant 4).
     */
    void drain() {
        if (!takeDrainRole()) {
            return;
        }
        boolean passed = false;
        try {
            do {
                pass();
            } while (!leaveDrainRole());
            passed = true;
        } finally {
            if (!passed) {
                // Only an Error escapes a pass (what a route throws fails its task): the role is let
                // go so that the next request drains.
                drain.set(IDLE);
            }
        }
    }

    private boolean takeDrainRole() {
        for (; ; ) {
            int s = drain.get();
            if (s == IDLE) {
                if (drain.compareAndSet(IDLE, DRAINING)) {
                    return true;
                }
            } else if (s == AGAIN || drain.compareAndSet(DRAINING, AGAIN)) {
                return false; // the drainer passes once more
            }
        }
    }

    /** Whether the drainer may stop: false when a request came during its pass (it passes again). */
    private boolean leaveDrainRole() {
        if (drain.compareAndSet(DRAINING, IDLE)) {
            return true;
        }
        // AGAIN, which only the drainer leaves: this compare-and-set cannot fail
        return !drain.compareAndSet(AGAIN, DRAINING);
    }

    /** One pass of the drainer over the queue, from its head, until a task must wait. */
    private void pass() {
        for (Entry e; (e = queue.peekFirst()) != null; ) {
            if (!e.state.compareAndSet(WAITING, TRYING)) {
                // GONE (the drainer leaves none of its own TRYING or DOOMED): a closer or a
                // cancellation took it and failed it, and may not have unlinked it yet
                queue.remove(e);
                continue;
            }
            if (!moveOn(e)) {
                if (e.state.compareAndSet(TRYING, WAITING)) {
                    scheduleRecheck(); // it waits; nothing else may happen to let it on
                    return;
                }
                fail(e.task, reasonToEnd(e)); // DOOMED while tried: it ends here
            }
            e.state.set(GONE); // the drainer's own entry; a doom landing now finds it moved on
            queue.remove(e);
        }
    }

    /** Tries a task the drainer holds; false: it must wait. */
    private boolean moveOn(Entry e) {
        DeviceTask task = e.task;
        if (closed.get() || e.state.get() == DOOMED || task.isCancelled()) {
            fail(task, reasonToEnd(e));
            return true;
        }
        try {
            return router.route(task);
        } catch (Throwable ex) {
            fail(task, ex);
            return true;
        }
    }

    private Throwable reasonToEnd(Entry e) {
        return closed.get() ? router.closedWhileWaiting(e.task) : router.cancelledWhileWaiting(e.task);
    }

    private void scheduleRecheck() {
        if (!closed.get() && recheckScheduled.compareAndSet(false, true)) {
            CompletableFuture.runAsync(
                    recheck, CompletableFuture.delayedExecutor(RECHECK_MILLIS, TimeUnit.MILLISECONDS));
        }
    }

    /**
     * What a pending recheck drains: the queue, until it closes. A closed queue needs no recheck
     * (invariant 3), and one pending on the JDK's shared delayed executor then keeps only this
     * holder reachable, not the backend.
     */
    private static final class Recheck implements Runnable {

        private volatile @Nullable WaitingTasks queue;

        Recheck(WaitingTasks queue) {
            this.queue = queue;
        }

        @Override
        public void run() {
            WaitingTasks q = queue;
            if (q != null) {
                q.recheckScheduled.set(false); // the recheck's own flag: it ran
                q.drain();
            }
        }

        /** Called once, by the thread that closed the queue. */
        void detach() {
            queue = null;
        }
    }

    /**
     * Closes the queue: fails every task it holds, or has the drainer holding it fail it
     * (invariant 3). Only the first call does anything.
     *
     * @return whether this call closed it
     */
    boolean close() {
        if (!closed.compareAndSet(false, true)) {
            return false;
        }
        recheck.detach();
        for (Entry e : queue) {
            end(e);
        }
        return true;
    }

    /** Fails the tasks of a cancelled run held here, or has the drainer holding one fail it. */
    void cancelRun(long runId) {
        for (Entry e : queue) {
            if (e.task.runId() == runId) {
                end(e);
            }
        }
    }

    /** Takes a waiting entry and fails its task, or dooms one the drainer holds (invariant 2). */
    private void end(Entry e) {
        for (; ; ) {
            int s = e.state.get();
            if (s == WAITING) {
                if (e.state.compareAndSet(WAITING, GONE)) {
                    queue.remove(e);
                    fail(e.task, reasonToEnd(e));
                    return;
                }
            } else if (s == TRYING) {
                if (e.state.compareAndSet(TRYING, DOOMED)) {
                    return;
                }
            } else {
                return; // DOOMED or GONE: its end is another's
            }
        }
    }

    private static void fail(DeviceTask task, Throwable error) {
        try {
            task.fail(error);
        } catch (Throwable ex) {
            log.warn("Failing task '{}' threw", task.taskName(), ex);
        }
    }
}
