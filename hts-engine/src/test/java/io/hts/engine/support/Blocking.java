package io.hts.engine.support;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What test bodies do instead of sleeping: block on something that only an interrupt ends (the
 * engine's cancel or time-out), with a bound so a regression fails a test instead of hanging it;
 * or make the interruptible call a body would make, which fails at once on a pending interrupt.
 * No test's outcome depends on how long either takes.
 */
public final class Blocking {

    private Blocking() {}

    /**
     * Blocks until this thread is interrupted, or at most {@code bound}.
     *
     * @throws InterruptedException when interrupted, as a blocking body would
     */
    public static void untilInterrupted(Duration bound) throws InterruptedException {
        new CountDownLatch(1).await(bound.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * An interruptible call that returns at once: throws when this thread's interrupt flag is set,
     * as any blocking call of a body would.
     */
    public static void interruptibleCall() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("the body's thread was interrupted");
        }
    }

    /** Keeps this thread busy (CPU work, not a sleep) for at least {@code time}: a body's measurable work. */
    public static void busyFor(Duration time) {
        long until = System.nanoTime() + time.toNanos();
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }
}
