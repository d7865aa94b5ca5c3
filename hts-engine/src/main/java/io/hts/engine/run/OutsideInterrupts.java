package io.hts.engine.run;

import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.spi.AbstractInterruptibleChannel;

/**
 * Tells an interrupt that another thread sends to this one apart from one that this thread gives
 * itself, over a stretch of code (a user's callback) on a thread the scheduler does not own: a
 * caller's. Without it, a flag set during the callback is ambiguous: clearing it could swallow the
 * caller's real interrupt, keeping it would leave the callback's own on the caller.
 *
 * <p><b>How.</b> {@link Thread#interrupt()} consults the target's I/O blocker only when another
 * thread calls it; {@link AbstractInterruptibleChannel#begin()} installs the channel as that
 * blocker, and an interrupt from another thread then closes the channel and marks this thread as
 * the one interrupted, which {@link AbstractInterruptibleChannel#end(boolean)} reports with a
 * {@link ClosedByInterruptException}. An instance is such a channel that does no I/O.
 *
 * <p><b>Invariants and ordering.</b> Used by one thread only. {@link #arm()} and
 * {@link #disarm()} pair up; {@code disarm} removes the blocker under the thread's blocker lock,
 * which an interrupting thread holds while it marks the channel, so once {@code disarm} returned,
 * an interrupt from another thread during the armed stretch is reported, and a later one is a plain
 * interrupt. A caller therefore reads and clears its flag <em>before</em> {@code disarm}: an
 * interrupt arriving between the two is still reported. An interrupt from another thread closes
 * the channel for good; {@link #disarm()} then says so, and the owner replaces the instance.
 * {@link #arm()} with the flag already set reports at once (as from another thread): arm only a
 * thread whose flag is clear, or expect the report.
 *
 * <p><b>Limit.</b> A thread has one blocker. Code in the stretch that does interruptible channel
 * I/O itself (a {@code FileChannel} write in a listener) installs its own and removes it when done:
 * an interrupt from another thread after that, before the stretch ends, is not reported.
 */
final class OutsideInterrupts extends AbstractInterruptibleChannel {

    /** Starts watching this thread for interrupts from other threads. */
    void arm() {
        begin();
    }

    /**
     * Stops watching.
     *
     * @return whether another thread interrupted this one while armed (this instance is then
     *     spent: use a new one)
     */
    boolean disarm() {
        try {
            end(true);
            return false;
        } catch (AsynchronousCloseException ex) { // a ClosedByInterruptException: closed by an interrupt
            return true;
        }
    }

    @Override
    protected void implCloseChannel() {
        // no I/O to stop: being closed by an interrupt is the whole message
    }
}
