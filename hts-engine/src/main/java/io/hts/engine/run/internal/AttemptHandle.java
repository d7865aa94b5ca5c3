package io.hts.engine.run.internal;

import io.hts.engine.graph.Device;
import org.jspecify.annotations.Nullable;

/**
 * One READY attempt of a task an extension owns, handed to {@link RunExtension#ready} or
 * {@link RunExtension#retry}. Implemented by the kernel over its own attempt.
 *
 * <p><b>Ownership.</b> The extension that was handed the attempt decides where it goes, once:
 * {@link #runHere}, {@link #failUnstarted}, or {@link #startRemote} (then it reports the outcome
 * with {@link #complete} or {@link #fail}). The kernel arbitrates every race on the attempt itself
 * with compare-and-sets on its outcome and its task's state, as for a device backend's attempts:
 * an attempt whose task was cancelled meanwhile does not start (here or remotely), and of the
 * reports of a started attempt the first counts and a second is ignored. So an extension may
 * report from any thread, and a late or repeated answer changes nothing.
 */
public interface AttemptHandle {

    /** The task's index in its graph. */
    int task();

    /** The attempt's number, from 1. */
    int attempt();

    /** When its time limit (for the device it was started for) passes, in {@code System.nanoTime()}; {@code Long.MAX_VALUE} when none. */
    long deadlineNanos();

    /**
     * Places the attempt on this scheduler as any attempt (a device by the policy, its resources),
     * and runs it; from any thread.
     */
    void runHere();

    /**
     * The attempt cannot be placed anywhere: its task FAILS without running (a cancellation that
     * came first wins over this).
     *
     * @param error why
     * @param device the device it was meant for, for its event
     */
    void failUnstarted(Throwable error, @Nullable Device device);

    /**
     * Starts the attempt as running elsewhere (its task READY to RUNNING; its retry and time limit
     * those of {@code device}; its timing on the remote lane); the extension then reports its end.
     *
     * @param device the body it runs there, which chooses its retry and time limit
     * @return whether it started; false when its task was cancelled, or the run stopped, meanwhile
     */
    boolean startRemote(Device device);

    /** A started attempt succeeded elsewhere with {@code result} (a second report is ignored). */
    void complete(@Nullable Object result);

    /** A started attempt failed elsewhere (or its delivery did); its retry decides what follows. */
    void fail(Throwable error);
}
