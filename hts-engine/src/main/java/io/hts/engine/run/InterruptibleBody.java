package io.hts.engine.run;

import io.hts.engine.exec.internal.PoolTask;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The interrupt arbitration of a task attempt's body ({@link TaskExecution} extends it; a base
 * class rather than a field, so that an attempt stays one object).
 *
 * <p><b>Invariants ({@code phase}).</b> A cancellation or a time-out interrupts the thread running
 * the body, but never that thread after it moved on to another task. A CPU runner sets RUNNING
 * (a release store) before it tries READY to RUNNING on the task; that compare-and-set orders the
 * store before the runner's look at the task's cancel request, and an interrupter records its
 * request before it reads the phase: either the interrupter sees RUNNING and interrupts, or the
 * runner sees the request and interrupts itself, so a body never begins unaware. The interrupter
 * moves RUNNING to INTERRUPTING with a compare-and-set, interrupts, then sets INTERRUPTED; the
 * runner, when the body returns (or the attempt does not start), moves RUNNING to DONE, or waits
 * out INTERRUPTING, and clears the flag before going on. An interrupt also tells the attempt
 * ({@link #onInterrupt()}: it cancels the run the body waits for in {@code ctx.execute}). While
 * the body waits for a run and its worker helps with other tasks (a nested task runs on the same
 * thread), the phase is SUSPENDED: an interrupt is then recorded (SUSPENDED_INTERRUPTED)
 * and the waiting worker unparked, and the flag is set again when the body resumes, so a nested
 * task never receives its outer task's interrupt.
 *
 * <p><b>Counting.</b> {@code interruptsSent} counts the interrupts the engine sent to the body's
 * thread, written before each by the one thread that owns that phase transition (the winner of
 * RUNNING to INTERRUPTING, or the body itself on resume), so a plain increment of the volatile is
 * enough; {@link UserCode} compares it around a user callback to tell the engine's interrupts
 * from the callback's own.
 */
abstract class InterruptibleBody extends PoolTask {

    private static final VarHandle PHASE;

    static {
        try {
            PHASE = MethodHandles.lookup().findVarHandle(InterruptibleBody.class, "phase", int.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private static final int IDLE = 0;
    private static final int RUNNING = 1;
    private static final int INTERRUPTING = 2;
    private static final int INTERRUPTED = 3;
    private static final int SUSPENDED = 4;
    private static final int SUSPENDED_INTERRUPTED = 5;
    private static final int DONE = 6;

    /** Written before the compare-and-set of {@code phase} that publishes it to interrupters. */
    private @Nullable Thread runner;
    /** Accessed through {@code PHASE}, by compare-and-set except for the owner's final stores. */
    private int phase;
    /** Interrupts the engine sent to the body's thread, counted before each (see {@link UserCode}). */
    private volatile int interruptsSent;

    /** Called when an interrupt is requested, before the body's thread is interrupted. */
    abstract void onInterrupt();

    /**
     * The body's thread, about to start the attempt: from here an interrupter may interrupt it.
     * A release store; the runner's compare-and-set of READY to RUNNING that follows orders it
     * before the runner's look at the cancel requests (a Dekker pair with an interrupter, which
     * records its request before it reads this phase).
     */
    void beginBody(Thread thread) {
        runner = thread;
        PHASE.setRelease(this, RUNNING);
    }

    /**
     * Just after the start (READY to RUNNING won, TASK_STARTED published): only the engine's
     * interrupts are for the body. A flag a listener set is cleared; an interrupter's (its phase
     * says so) is kept, or set again if the clearing crossed it; and a cancel requested before the
     * start interrupts the body through the phase, as an interrupter would (so a wait the body
     * enters keeps it, see {@link #suspend()}).
     */
    void settleStart(boolean cancelRequested) {
        Thread.interrupted();
        while (true) {
            int p = (int) PHASE.getVolatile(this);
            if (p == RUNNING) {
                if (!cancelRequested) {
                    return;
                }
                if (PHASE.compareAndSet(this, RUNNING, INTERRUPTING)) {
                    interruptsSent++;
                    Thread.currentThread().interrupt();
                    PHASE.setVolatile(this, INTERRUPTED);
                    return;
                }
            } else if (p == INTERRUPTING) {
                Thread.onSpinWait();
            } else {
                if (p == INTERRUPTED) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
        }
    }

    void endBody() {
        if (!PHASE.compareAndSet(this, RUNNING, DONE)) {
            while ((int) PHASE.getVolatile(this) == INTERRUPTING) {
                Thread.onSpinWait();
            }
            PHASE.setVolatile(this, DONE);
        }
        // Whoever set it (an interrupter, or the body itself), the flag must not reach the next task.
        Thread.interrupted();
    }

    /**
     * Interrupts the body's thread if the body is still running (or when it begins), never a later
     * task's; and cancels the run the body waits for.
     */
    boolean interrupt() {
        onInterrupt();
        while (true) {
            int p = (int) PHASE.getVolatile(this);
            if (p == RUNNING) {
                if (PHASE.compareAndSet(this, RUNNING, INTERRUPTING)) {
                    Thread t = runner;
                    if (t != null) {
                        interruptsSent++; // only the winner of the phase writes it
                        t.interrupt();
                    }
                    PHASE.setVolatile(this, INTERRUPTED);
                    return true;
                }
            } else if (p == SUSPENDED) {
                if (PHASE.compareAndSet(this, SUSPENDED, SUSPENDED_INTERRUPTED)) {
                    Thread t = runner;
                    if (t != null) {
                        LockSupport.unpark(t); // the waiting body looks at its cancellation
                    }
                    return true;
                }
            } else {
                return false;
            }
        }
    }

    /** The body is about to wait and help: interrupts are recorded, not delivered, until {@link #resume()}. */
    void suspend() {
        while (true) {
            int p = (int) PHASE.getVolatile(this);
            if (p == RUNNING) {
                // A flag the body's thread already carries (the body interrupted itself, say) is
                // kept in the phase too, so that no task run inside the wait sees it.
                boolean flagged = Thread.interrupted();
                if (PHASE.compareAndSet(this, RUNNING, flagged ? SUSPENDED_INTERRUPTED : SUSPENDED)) {
                    return;
                }
                if (flagged) {
                    Thread.currentThread().interrupt(); // an interrupter came first: look again
                }
                continue;
            }
            if (p == INTERRUPTING) {
                Thread.onSpinWait();
            } else if (p == INTERRUPTED && PHASE.compareAndSet(this, INTERRUPTED, SUSPENDED_INTERRUPTED)) {
                Thread.interrupted(); // kept in the phase; given back on resume
                return;
            } else if (p != RUNNING && p != INTERRUPTING && p != INTERRUPTED) {
                return; // not a running body (the wait is outside any body)
            }
        }
    }

    /** The wait is over: an interrupt recorded meanwhile is delivered now. */
    void resume() {
        while (true) {
            int p = (int) PHASE.getVolatile(this);
            if (p == SUSPENDED && PHASE.compareAndSet(this, SUSPENDED, RUNNING)) {
                return;
            }
            if (p == SUSPENDED_INTERRUPTED && PHASE.compareAndSet(this, SUSPENDED_INTERRUPTED, INTERRUPTED)) {
                interruptsSent++;
                Thread.currentThread().interrupt();
                return;
            }
            if (p != SUSPENDED && p != SUSPENDED_INTERRUPTED) {
                return;
            }
        }
    }

    /** How many interrupts the engine sent to the body's thread (see {@link UserCode}). */
    int interruptsSent() {
        return interruptsSent;
    }

    /**
     * Waits out an interrupter that has counted its interrupt but not yet sent it (the phase is
     * INTERRUPTING from before the count to after the interrupt): once this returns, every
     * interrupt already counted has landed on the body's thread (see {@link UserCode#enter}).
     */
    void awaitCountedInterrupts() {
        while ((int) PHASE.getVolatile(this) == INTERRUPTING) {
            Thread.onSpinWait();
        }
    }

    /** Whether the body runs (or waits) on a thread right now. */
    boolean bodyRunning() {
        int p = (int) PHASE.getAcquire(this);
        return p != IDLE && p != DONE;
    }
}
