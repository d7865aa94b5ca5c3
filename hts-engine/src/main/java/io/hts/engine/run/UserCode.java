package io.hts.engine.run;

import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.Worker;
import java.util.Arrays;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;

/**
 * Runs the user's callbacks that a scheduler calls on whatever thread it is on (listeners,
 * {@code whenDone} stages, releases of results, policies), so that they cannot disturb that thread:
 *
 * <ul>
 *   <li><b>Interrupts.</b> A flag the callback sets is its own and is cleared when it returns; a
 *       flag it clears that was set before is set again. An interrupt meant for the thread, sent
 *       while the callback ran, is kept: on one of the scheduler's workers, one the engine sent to
 *       the body running on it (a cancel or a time-out, counted by
 *       {@link InterruptibleBody#interruptsSent()} before the thread is interrupted); on any other
 *       thread (a caller's, the timer, a backend's), one that another thread sent, told apart from
 *       the callback's own by {@link OutsideInterrupts}. Without this, a listener running on a
 *       body's thread (an event the body caused, a nested run's events inside a wait) could fail
 *       that body or swallow its cancellation, and one running on a caller's thread (a root made
 *       ready by {@code submit}, a GPU completion a waiting caller reports, a {@code whenDone}
 *       stage it completes) could make that caller's wait throw, or swallow the caller's own
 *       interrupt.
 *   <li><b>Waiting for the scheduler.</b> While a callback of a scheduler runs,
 *       {@link #running(Scheduler)} is true on its thread, so that that scheduler's
 *       {@link Scheduler#close()} called from it shuts down without waiting for the run it is part
 *       of (the thread that called it may be finishing that run).
 * </ul>
 *
 * <p><b>Ordering.</b> Thread confinement, except the count and the interrupts of other threads.
 * The count is read before the flag on the way in, and after the flag is cleared on the way out.
 * The engine raises the count before it interrupts, within the body's INTERRUPTING phase; on the
 * way in, after reading the count, the callback waits that phase out before reading the flag, so
 * an interrupt whose count it read has landed and is seen in the flag (and set again on the way
 * out). One counted later is told by the count on the way out (and set again), whenever it lands.
 * Without the wait, an interrupt counted just before the count was read and landing just after
 * the flag was read was cleared on the way out and lost (Issue33ReviewBreakTests, a listener of
 * {@code RUN_SUBMITTED} on the thread of a body cancelled as it started its nested run). Off the
 * workers, the flag is read and cleared while {@link OutsideInterrupts} still watches, and only
 * then does it stop watching, so an interrupt from another thread is either reported by it (and
 * set again) or lands after the clearing.
 */
final class UserCode {

    /**
     * The callbacks running on this thread, innermost last: whose scheduler, the body they run
     * over, its interrupt count and the flag when they began. Arrays, so that entering and leaving
     * allocate nothing (events are published on the dispatch path when listeners exist).
     */
    private static final class Frames {
        Scheduler[] of = new Scheduler[4];

        @Nullable
        InterruptibleBody[] body = new InterruptibleBody[4];

        int[] sent = new int[4];
        boolean[] before = new boolean[4];
        /** Whether the frame watches for other threads' interrupts (off the workers, flag clear). */
        boolean[] watched = new boolean[4];
        /** Watches this thread for other threads' interrupts; made when first needed (never on a
         *  worker), replaced once it reported one. */
        @Nullable
        OutsideInterrupts outside;

        OutsideInterrupts outside() {
            OutsideInterrupts o = outside;
            if (o == null) {
                o = new OutsideInterrupts();
                outside = o;
            }
            return o;
        }

        int depth;

        void grow() {
            int n = of.length * 2;
            of = Arrays.copyOf(of, n);
            body = Arrays.copyOf(body, n);
            sent = Arrays.copyOf(sent, n);
            before = Arrays.copyOf(before, n);
            watched = Arrays.copyOf(watched, n);
        }
    }

    private static final ThreadLocal<Frames> FRAMES = ThreadLocal.withInitial(Frames::new);

    private UserCode() {}

    /** Whether this thread is inside a callback that {@code scheduler} called. */
    static boolean running(Scheduler scheduler) {
        Frames f = FRAMES.get();
        for (int k = 0; k < f.depth; k++) {
            if (f.of[k] == scheduler) {
                return true;
            }
        }
        return false;
    }

    /** Whether this thread is inside a callback of any scheduler. */
    static boolean runningAny() {
        return FRAMES.get().depth > 0;
    }

    static void run(Scheduler scheduler, Runnable callback) {
        enter(scheduler);
        try {
            callback.run();
        } finally {
            exit();
        }
    }

    /** Runs a callback of {@code scheduler} that answers (a policy's choice) under this guard. */
    static <T> T call(Scheduler scheduler, java.util.function.Supplier<T> callback) {
        enter(scheduler);
        try {
            return callback.get();
        } finally {
            exit();
        }
    }

    /**
     * Runs user code that a caller's thread runs for the scheduler (a GPU body that the caller of
     * {@code execute} launches itself) with the caller's interrupt kept from it: a flag set before
     * is cleared for the code and set again after; one that another thread sends meanwhile is kept;
     * the code's own is cleared.
     */
    static <T> T onCaller(Scheduler scheduler, Callable<T> code) throws Exception {
        Thread thread = Thread.currentThread();
        boolean before = Thread.interrupted();
        enter(scheduler); // the flag is clear: watched for other threads' interrupts
        try {
            return code.call();
        } finally {
            exit();
            if (before) {
                thread.interrupt();
            }
        }
    }

    /**
     * A callback of {@code scheduler} begins on this thread; pair with {@link #exit()} in a finally.
     * On a worker, the next task's start is read afresh ({@link RunRecorder#userCodeRuns}): it must
     * not take the previous task's end as its start and so count the callback's time as its own.
     */
    static void enter(Scheduler scheduler) {
        RunRecorder.userCodeRuns();
        Thread thread = Thread.currentThread();
        InterruptibleBody body = runningBody(thread);
        Frames f = FRAMES.get();
        if (f.depth == f.of.length) {
            f.grow();
        }
        int k = f.depth++;
        f.of[k] = scheduler;
        f.body[k] = body;
        f.sent[k] = body == null ? 0 : body.interruptsSent();
        if (body != null) {
            body.awaitCountedInterrupts(); // a counted interrupt lands before the flag is read
        }
        boolean before = thread.isInterrupted();
        f.before[k] = before;
        boolean watch = !before && !(thread instanceof Worker);
        f.watched[k] = watch;
        if (watch) {
            f.outside().arm(); // an interrupt from another thread between the read above and here: reported
        }
    }

    /** The innermost callback on this thread ended: its thread's interrupt status is settled. */
    static void exit() {
        Thread thread = Thread.currentThread();
        Frames f = FRAMES.get();
        int k = --f.depth;
        InterruptibleBody body = f.body[k];
        int sent = f.sent[k];
        boolean before = f.before[k];
        boolean watched = f.watched[k];
        f.of[k] = null;
        f.body[k] = null;
        if (before) {
            if (!thread.isInterrupted()) {
                thread.interrupt(); // not the callback's to clear
            }
        } else if (watched) {
            Thread.interrupted(); // the callback's own flag, cleared while still watched
            if (f.outside().disarm()) {
                f.outside = null; // spent
                thread.interrupt(); // another thread's, sent while the callback ran: kept
            }
            rewatchOuter(f);
        } else if (thread instanceof Worker) {
            Thread.interrupted(); // the callback's own flag
            if (body != null && body.interruptsSent() != sent) {
                thread.interrupt(); // the engine's, sent while the callback ran: kept, even if the callback swallowed
                // it
            }
        }
    }

    /**
     * Disarming removed the thread's one blocker, which an enclosing watched callback needs too:
     * install it again (reporting at once if the flag is now set, which after the clearing above
     * can only be another thread's interrupt).
     */
    private static void rewatchOuter(Frames f) {
        for (int j = f.depth - 1; j >= 0; j--) {
            if (f.watched[j]) {
                f.outside().arm();
                return;
            }
        }
    }

    private static @Nullable InterruptibleBody runningBody(Thread thread) {
        if (thread instanceof Worker w) {
            PoolTask current = w.current();
            if (current instanceof InterruptibleBody e && e.bodyRunning()) { // a static task's or a dynamic one's
                return e;
            }
        }
        return null;
    }
}
