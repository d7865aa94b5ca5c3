package io.hts.engine.exec.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The pool's idle workers and the protocol that wakes them: no lost wake-up, and no wake-up spent
 * on a worker that is not waiting.
 *
 * <h2>Implementation overview</h2>
 *
 * <p><b>The stack.</b> Idle workers wait on a Treiber stack packed into one {@code long}: the top
 * slot's index + 1 in the low 16 bits and a version in the high 48 bits, incremented by every push
 * and pop, which rules out ABA. Each slot links to the next with a plain int written only while
 * its worker is off the stack.
 *
 * <p><b>A slot's state</b> (one volatile int, changed by compare-and-set only):
 * <ul>
 *   <li>ACTIVE: off the stack.
 *   <li>QUEUED: on the stack, about to park or parked. A signaller that pops it moves it to ACTIVE
 *       and unparks it.
 *   <li>STALE: on the stack, but its worker found work after queueing and could not take itself
 *       off (it was not on top). A signaller that pops a STALE slot moves it to ACTIVE and passes
 *       the signal on to the next slot, so a wake-up never lands on a busy worker while a parked
 *       one waits. A STALE worker that idles again re-arms its slot (STALE to QUEUED) in place.
 * </ul>
 * A slot on the stack is never ACTIVE: a worker sets QUEUED before it pushes, and only the popper
 * sets ACTIVE, after the pop.
 *
 * <p><b>No lost wake-up</b> (a Dekker pair). A worker that runs out of work first queues itself
 * (a compare-and-set on the stack, a full fence), then scans all queues once more, and parks only
 * while its slot is QUEUED. A producer first publishes its work, then issues a full fence and
 * pops. Whatever the interleaving, either the producer's pop finds the worker (and unparks it, or
 * the worker sees ACTIVE before parking) or the worker's last scan finds the work.
 *
 * <p><b>Guarantee.</b> A {@link #signal()} after work was published wakes one worker that is
 * parked or about to check the queues again, if any is queued; workers that went back to work are
 * skipped. A worker woken by a signal may find the work already taken by another: it then queues
 * again. An idle pool therefore consumes no CPU, and no task waits while a worker sleeps.
 */
final class IdleWorkers {

    static final int ACTIVE = 0;
    static final int QUEUED = 1;
    static final int STALE = 2;

    private static final long INDEX_MASK = 0xFFFFL;
    /** The most slots: indices + 1 fit the 16 low bits of the stack word. */
    static final int MAX_SLOTS = (int) INDEX_MASK - 1;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Slot.class, "state", int.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** One worker's place in the protocol. */
    static final class Slot {

        final int index;
        /** The thread to unpark; set once by its worker before it first queues. */
        volatile @Nullable Thread thread;
        /** Index + 1 of the next slot on the stack; written only while this slot is off the stack. */
        int next;

        volatile int state = ACTIVE;

        Slot(int index) {
            this.index = index;
        }

        int state() {
            return state;
        }

        @Override
        public String toString() {
            return "idle slot " + index + " (" + (state == ACTIVE ? "ACTIVE" : state == QUEUED ? "QUEUED" : "STALE")
                    + ")";
        }
    }

    private final Slot[] slots;
    private final AtomicLong stack = new AtomicLong();

    IdleWorkers(Slot[] slots) {
        if (slots.length > MAX_SLOTS) {
            throw new IllegalArgumentException("at most " + MAX_SLOTS + " workers, was " + slots.length);
        }
        this.slots = slots;
    }

    /**
     * The calling worker is out of work: its slot is QUEUED on the stack afterwards. The caller then
     * scans the queues once more; if that finds work it calls {@link #leave}, else it parks while
     * {@link #isQueued} holds.
     */
    void enqueue(Slot s) {
        if (s.state == STALE && STATE.compareAndSet(s, STALE, QUEUED)) {
            return; // still on the stack from before: re-armed in place (a popper racing us sees QUEUED)
        }
        s.state = QUEUED;
        while (true) {
            long c = stack.get();
            s.next = (int) (c & INDEX_MASK);
            long next = (((c >>> 16) + 1) << 16) | (s.index + 1);
            if (stack.compareAndSet(c, next)) {
                return;
            }
        }
    }

    /** Whether the slot still waits for a signal (the park loop's condition). */
    boolean isQueued(Slot s) {
        return s.state == QUEUED;
    }

    /**
     * The worker found work (or stops waiting) after {@link #enqueue}: it takes its slot off the
     * stack when it is on top, or else marks it STALE so that a signal passes it by.
     *
     * @return whether a signal had woken it first (it is then off the stack)
     */
    boolean leave(Slot s) {
        if (s.state != QUEUED) {
            return true; // signalled: a popper took it off the stack
        }
        long c = stack.get();
        if ((int) (c & INDEX_MASK) == s.index + 1) {
            long next = (((c >>> 16) + 1) << 16) | s.next;
            if (stack.compareAndSet(c, next)) {
                s.state = ACTIVE; // off the stack by our own pop: no popper can hold it
                return false;
            }
        }
        // Fails only when a popper moved it to ACTIVE meanwhile (it is then off the stack).
        return !STATE.compareAndSet(s, QUEUED, STALE);
    }

    /**
     * Wakes one queued worker, passing over STALE slots. Callers have just published work.
     *
     * @return the slot woken, or {@code null} when none was queued
     */
    @Nullable
    Slot signal() {
        // Pairs with the stack's compare-and-set in enqueue: work published before this fence is
        // seen by a worker that queued after it, or that worker is seen here.
        java.lang.invoke.VarHandle.fullFence();
        while (true) {
            Slot s = pop();
            if (s == null) {
                return null;
            }
            while (true) {
                int st = s.state;
                if (st == QUEUED) {
                    if (STATE.compareAndSet(s, QUEUED, ACTIVE)) {
                        Thread t = s.thread;
                        if (t != null) {
                            LockSupport.unpark(t);
                        }
                        return s;
                    }
                } else if (st == STALE) {
                    if (STATE.compareAndSet(s, STALE, ACTIVE)) {
                        break; // busy: pass the signal on
                    }
                } else {
                    break; // cannot happen: a slot on the stack is never ACTIVE; pass on
                }
            }
        }
    }

    /** Wakes every queued worker (shutdown). */
    void signalAll() {
        while (signal() != null) {
            // each signal wakes one
        }
    }

    private @Nullable Slot pop() {
        while (true) {
            long c = stack.get();
            int top = (int) (c & INDEX_MASK);
            if (top == 0) {
                return null;
            }
            Slot s = slots[top - 1];
            long next = (((c >>> 16) + 1) << 16) | s.next;
            if (stack.compareAndSet(c, next)) {
                return s;
            }
        }
    }
}
