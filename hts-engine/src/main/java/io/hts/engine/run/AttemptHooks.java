package io.hts.engine.run;

import io.hts.engine.graph.Device;
import io.hts.engine.run.internal.AttemptHandle;
import org.jspecify.annotations.Nullable;

/**
 * An attempt of a task an extension owns, as the extension sees it ({@link AttemptHandle}): made
 * when the attempt is handed over, never for other tasks. Every call goes to the attempt's own
 * arbitration (its outcome's and its task's compare-and-sets, see {@link TaskExecution}), as a
 * device backend's calls do; this holds nothing of its own.
 */
final class AttemptHooks implements AttemptHandle {

    private final TaskExecution e;

    AttemptHooks(TaskExecution e) {
        this.e = e;
    }

    @Override
    public int task() {
        return e.index;
    }

    @Override
    public int attempt() {
        return e.attempt;
    }

    @Override
    public long deadlineNanos() {
        return e.deadlineNanos();
    }

    @Override
    public void runHere() {
        e.run.placement.dispatchInSlice(e);
    }

    @Override
    public void failUnstarted(Throwable error, @Nullable Device device) {
        e.run.propagation.failUnstarted(e.index, error, device, e.attempt);
    }

    @Override
    public boolean startRemote(Device device) {
        e.device = device; // (before the start: its retry and time limit are this device's)
        return e.start(TaskExecution.REMOTE_LANE);
    }

    @Override
    public void complete(@Nullable Object result) {
        e.complete(result);
    }

    @Override
    public void fail(Throwable error) {
        e.fail(error);
    }

    @Override
    public String toString() {
        return e.toString();
    }
}
