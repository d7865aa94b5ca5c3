package io.hts.gpu.exec;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.CudaErrorKind;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.stream.StreamManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a device's tasks: the tasks whose device work is in flight, seen complete by an event
 * query, finished (completion actions, report, stream released) in the order their work allows,
 * and all failed together when the context is poisoned or the launcher stops.
 *
 * <p><b>Ownership.</b> Everything here is touched only by the thread that holds the device's
 * driving token ({@link DeviceLauncher}: the launcher, or a caller waiting for a run), so nothing
 * is synchronized: the token's compare-and-set and volatile release order one holder's writes
 * before the next holder's reads. {@code running} is shared: the launcher counts a task in before
 * it leaves the queue, and it is counted out here only after its report, so a waiter that reads it
 * non-zero keeps assisting until its run has ended.
 *
 * <p><b>What a waiter may finish.</b> Completion actions that are user code, or large host copies,
 * run on the launcher only ({@link GpuContext#finishesOnLauncher}): a waiter leaves such a task in
 * flight and wakes the launcher, so a waiter's deadline is never held by an action, and no
 * interrupt passes between an action and a caller. An interrupt an action leaves on the launcher is
 * cleared after the task's actions (it would make the launcher's parks return at once).
 */
final class DeviceCompletions {

    private static final Logger log = LoggerFactory.getLogger(DeviceCompletions.class);

    private final GpuBackend backend;
    private final CudaApi api;
    private final StreamManager streams;
    private final DeviceTimes times;
    private final FollowedWork followable;
    private final AtomicInteger running;
    private final Thread launcher;
    /** Hands the queued tasks back (refused with the device's reason and this cause). */
    private final Consumer<@Nullable Throwable> drainQueue;

    private final List<InFlight> inFlight = new ArrayList<>();
    /** Set by a waiter that left a task's actions to the launcher, cleared by the launcher's poll. */
    private boolean launcherWanted;
    /** Set by the driver that saw a sticky error, before the device is marked DOWN. */
    private boolean poisoned;

    DeviceCompletions(
            GpuBackend backend,
            CudaApi api,
            StreamManager streams,
            DeviceTimes times,
            FollowedWork followable,
            AtomicInteger running,
            Thread launcher,
            Consumer<@Nullable Throwable> drainQueue) {
        this.backend = backend;
        this.api = api;
        this.streams = streams;
        this.times = times;
        this.followable = followable;
        this.running = running;
        this.launcher = launcher;
        this.drainQueue = drainQueue;
    }

    /** Whether a sticky error poisoned the context: nothing more may be asked of it. */
    boolean poisoned() {
        return poisoned;
    }

    /** Whether a waiter left a task that only the launcher may finish (read by the token's holder). */
    boolean launcherWanted() {
        return launcherWanted;
    }

    boolean isEmpty() {
        return inFlight.isEmpty();
    }

    /** The tasks in flight, for the launcher's estimate of when to look again. */
    List<InFlight> inFlight() {
        return inFlight;
    }

    void add(InFlight f) {
        inFlight.add(f);
    }

    /**
     * Finishes every task whose work has completed (and whose device predecessors are done) that
     * the calling driver may finish.
     *
     * @return whether any task was finished
     */
    boolean poll() {
        boolean onLauncher = Thread.currentThread() == launcher;
        if (onLauncher) {
            launcherWanted = false;
        }
        boolean launcherNeeded = false;
        boolean any = false;
        for (int k = 0; k < inFlight.size(); ) {
            InFlight f = inFlight.get(k);
            boolean done;
            try {
                // a task that follows others on the device completes after them, never before
                done = (f.event == null || api.isComplete(f.event)) && backend.predecessorsDone(f.task);
            } catch (CudaException ex) {
                f.error = InFlight.merge(f.error, ex);
                if (ex.kind() == CudaErrorKind.STICKY) {
                    deviceDown(ex, "task '" + f.task.taskName() + "'", f);
                    return true; // everything in flight is finished
                }
                f.keepResources = !streamDrained(f); // its work may still run: release nothing it uses
                done = true;
            }
            if (done && !onLauncher && !f.keepResources && f.ctx.finishesOnLauncher()) {
                launcherNeeded = true; // its actions are the launcher's: leave it in flight
                done = false;
            }
            if (done) {
                inFlight.remove(k);
                finish(f);
                any = true;
            } else {
                k++;
            }
        }
        if (launcherNeeded) {
            launcherWanted = true;
            LockSupport.unpark(launcher);
        }
        return any;
    }

    private void finish(InFlight f) {
        boolean usable = !poisoned && !f.keepResources;
        Throwable error = f.error;
        if (usable) {
            List<Runnable> actions = f.ctx.completionActions(); // no more can be registered
            for (int k = 0, n = actions.size(); k < n; k++) {
                try {
                    actions.get(k).run();
                } catch (Throwable ex) { // an Error too: the task fails, the launcher goes on
                    error = InFlight.merge(error, ex);
                }
            }
            if (Thread.currentThread() == launcher) {
                Thread.interrupted(); // an action's flag is not the launcher's (waiters run no user action)
            }
            streams.release(f.lease); // its work has completed: the stream is free for the next task
        }
        times.record(f.times, System.nanoTime() - f.startNanos);
        try {
            if (error == null) {
                f.task.complete(f.result);
            } else {
                if (f.result instanceof DeviceBuffer b
                        && !f.handedOut
                        && usable
                        && !f.task.inputs().contains(b)) {
                    b.close(); // reaches nobody (one handed to followers is the run's; an input passed on is not its)
                }
                if (poisoned && !backend.anotherDeviceUsable()) {
                    f.task.failDeviceLost(error); // a retry would meet the device DOWN: none, or on the CPU
                } else {
                    f.task.fail(error);
                }
            }
        } catch (Throwable ex) {
            log.warn("HTS GPU backend {}: reporting task '{}' failed", backend.name(), f.task.taskName(), ex);
        }
        // only after the report: a caller waiting for this task's run keeps assisting until it ended
        running.decrementAndGet();
        // Only now may a task following this one (here or on a peer) be seen complete.
        if (f.followable) {
            followable.remove(f.task);
        }
        if (usable && f.event != null) {
            streams.events().recycle(f.event);
        }
    }

    /**
     * The context is poisoned: the culprit fails first with the error, then every other task in
     * flight, then the queue; every later dispatch is refused with the reason.
     */
    void deviceDown(CudaException error, String where, @Nullable InFlight culprit) {
        if (poisoned || backend.isDown()) {
            return;
        }
        poisoned = true; // nothing more is asked of the context: no completion action, no release
        backend.memory().poison(error.errorName());
        // the culprit fails before placements can see the device DOWN, so its error is its run's first
        if (culprit != null && inFlight.remove(culprit)) {
            if (culprit.error == null) {
                culprit.error = error;
            }
            finish(culprit);
        }
        backend.down(error.errorName() + " in " + where + " poisoned the CUDA context of " + backend.name()
                + "; the device is DOWN until the application restarts");
        log.error("HTS GPU backend: {}", backend.refusal(), error);
        List<InFlight> rest = new ArrayList<>(inFlight);
        inFlight.clear();
        for (InFlight f : rest) {
            if (f.error == null) {
                f.error = new GpuUnavailableException(
                        "the device failed while task '" + f.task.taskName() + "' ran: " + backend.refusal(), error);
            }
            finish(f);
        }
        drainQueue.accept(error);
    }

    /**
     * The launcher stopped on an unexpected error (not the device's): every task in flight fails
     * once its stream's work has ended.
     *
     * @return whether the device's memory may be released: the context is not poisoned and every
     *     stream's work could be followed to its end
     */
    boolean launcherStopped(Throwable ex) {
        boolean drained = !poisoned;
        for (InFlight f : inFlight) {
            if (!poisoned) {
                f.keepResources = !streamDrained(f);
                drained &= !f.keepResources;
            }
            try {
                f.task.fail(new GpuUnavailableException(
                        "the launcher of " + backend.name() + " stopped while" + " task '" + f.task.taskName()
                                + "' ran",
                        ex));
            } catch (Throwable report) {
                ex.addSuppressed(report);
            }
            running.decrementAndGet();
        }
        inFlight.clear();
        return drained;
    }

    /** After a failed event query: waits for the task's stream on the host; false when that fails too. */
    private boolean streamDrained(InFlight f) {
        try {
            api.synchronize(f.lease.stream());
            return true;
        } catch (RuntimeException ex) {
            log.warn(
                    "HTS GPU backend {}: the work of task '{}' cannot be followed ({}); its stream and memory are"
                            + " kept, not reused",
                    backend.name(),
                    f.task.taskName(),
                    ex.toString());
            return false;
        }
    }
}
