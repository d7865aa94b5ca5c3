package io.hts.engine.run;

import io.hts.engine.exec.PoolTask;
import io.hts.engine.exec.Worker;
import org.jspecify.annotations.Nullable;

/**
 * Runs the user's callbacks that the engine calls on whatever thread it is on (listeners,
 * {@code whenDone} stages, releases of results, policies), so that they cannot disturb that thread:
 *
 * <ul>
 *   <li><b>Interrupts.</b> A flag the callback sets is its own and is cleared when it returns; one
 *       it clears that was set before is set again; an interrupt the engine sent meanwhile to the
 *       body running on this thread (a cancel or a time-out, counted by
 *       {@link TaskExecution#interruptsSent()} before the thread is interrupted) is kept. Without
 *       this, a listener running on a body's thread (an event the body caused, a nested run's
 *       events inside a wait) could fail that body, or swallow its cancellation.
 *   <li><b>Waiting for the scheduler.</b> While a callback runs, {@link #running()} is true on its
 *       thread, so that {@link Scheduler#close()} called from it shuts down without waiting for
 *       the run it is part of (the thread that called it may be finishing that run).
 * </ul>
 *
 * <p>Thread confinement only: the depth lives in a thread-local; the interrupt count is a volatile
 * read of the running attempt (written before the interrupt it counts, and an interrupt
 * happens-before its detection, so a flag the engine set is always seen with its count).
 */
final class UserCode {

    private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);

    private UserCode() {
    }

    /** Whether this thread is inside a user callback the engine called. */
    static boolean running() {
        return DEPTH.get()[0] > 0;
    }

    static void run(Runnable callback) {
        Thread thread = Thread.currentThread();
        TaskExecution body = runningBody(thread);
        boolean before = thread.isInterrupted();
        int sent = body == null ? 0 : body.interruptsSent();
        int[] depth = DEPTH.get();
        depth[0]++;
        try {
            callback.run();
        }
        finally {
            depth[0]--;
            boolean after = thread.isInterrupted();
            if (after && !before && (body == null || body.interruptsSent() == sent)) {
                Thread.interrupted(); // the callback's own
            }
            else if (!after && before) {
                thread.interrupt(); // not the callback's to clear
            }
        }
    }

    private static @Nullable TaskExecution runningBody(Thread thread) {
        if (thread instanceof Worker w) {
            PoolTask current = w.current();
            if (current instanceof TaskExecution e && e.bodyRunning()) {
                return e;
            }
        }
        return null;
    }
}
