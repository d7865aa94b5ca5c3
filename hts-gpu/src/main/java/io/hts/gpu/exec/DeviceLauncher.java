package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceTask;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.stream.StreamLease;
import io.hts.gpu.stream.StreamManager;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that drives a device: it launches dispatched tasks on free streams, sees their
 * device work complete, reports them, and at the end releases the device's resources.
 *
 * <p><b>Ownership.</b> Only the thread that holds {@code driver} (the launcher, or a caller waiting
 * for a run: {@link #assist}) polls events and finishes tasks ({@link DeviceCompletions}); while a
 * waiter polls, the launcher neither polls nor spins (unless the waiter left it a task to finish),
 * so that the caller who needs the end sees it on its own, hot thread; only the launcher runs GPU bodies and users' completion actions, except the one body that the caller of
 * {@code Scheduler.execute} launches itself while it holds the token ({@link #launchHere}, its
 * interrupt kept from the body by the engine). The token is taken by compare-and-set and given back by a volatile
 * write, so each holder sees what the previous one did. The launcher alone releases the backend's resources,
 * when it exits (keeping the token for good), so a {@link #close} from any thread, a completion
 * included, never waits for itself. Other threads only {@link #submit} (a lock-free queue) and look
 * up a task's completion event to follow it ({@link #orderAfter}, {@link #isInFlight}).
 *
 * <p><b>Never a result before its completion.</b> A task's successors learn that its work is
 * enqueued (and may then be dispatched to follow it on the device) only when its result is
 * device-resident, a {@link DeviceBuffer} that work ordered after this task's on the device reads
 * correctly, or null (nothing to read: its work reaches them through device memory). A host array,
 * a direct buffer or any other value may be filled by the task's completion actions (a download), so such tasks' successors start only once they completed.
 *
 * <p><b>Completion order across devices</b> is {@link FollowedWork}'s: a followed task leaves
 * it only after it was reported, so a follower here or on a peer is never reported before it.
 *
 * <p><b>Shutdown.</b> {@code closing} stops new work; the launcher exits once its queue and work in
 * flight are empty and sets {@code exited}; a dispatch racing the exit sees {@code exited} after its
 * add, or the launcher sees the task after setting it, and whoever polls it hands it back.
 *
 * <p><b>A sticky error</b> ({@link io.hts.gpu.cuda.CudaErrorKind#STICKY}) poisons the context: the
 * task whose work raised it fails first and with it (so it is its run's first failure), then the
 * rest in flight, then the queued tasks move to the CPU or fail, each with the error as cause; the
 * context's resources are then never released through it. An unexpected error that stops the
 * launcher fails the tasks in flight once their streams' work ended, and the resources are released.
 */
final class DeviceLauncher {

    private static final Logger log = LoggerFactory.getLogger(DeviceLauncher.class);
    /** How long an idle launcher spins without the token between looks (a few microseconds). */
    private static final int IDLE_SPINS_WITHOUT_TOKEN = 256;
    /** A waiter that polled this recently is polling still: the launcher leaves the device's ends to it. */
    private static final long ASSIST_FRESH_NANOS = 50_000;
    /** How long the launcher parks while a waiter polls (a backstop: the waiter sees its run's end). */
    private static final long ASSISTED_PARK_NANOS = 100_000;
    /** How long a caller that would launch its task itself waits for a launcher holding the token. */
    private static final long TOKEN_WAIT_NANOS = 20_000;

    private final GpuBackend backend;
    private final CudaApi api;
    private final GpuSettings settings;
    private final StreamManager streams;
    private final DeviceTimes times = new DeviceTimes();
    private final ConcurrentLinkedQueue<DeviceTask> queue = new ConcurrentLinkedQueue<>();
    final AtomicInteger queued = new AtomicInteger();
    final AtomicInteger running = new AtomicInteger();
    private final DeviceCompletions completions;
    /** The completion events of in-flight tasks that others may follow; see the class comment. */
    private final FollowedWork followable;

    private final Thread thread;
    /** Enqueued after long tasks' work: wakes a sleeping launcher when the work has completed. */
    private final Runnable wake;

    private final CountDownLatch exitedLatch = new CountDownLatch(1);
    /** Who drives the device now (see the class comment), or null. */
    private final AtomicReference<@Nullable Thread> driver = new AtomicReference<>();
    /** {@code hts.gpu.poll-spin} in nanoseconds. */
    private final long pollSpinNanos;
    /** When a waiting caller last polled the device ({@link #assist}), 0 before one did. */
    private volatile long assistedAt;

    private volatile boolean closing;
    private volatile boolean exited;

    DeviceLauncher(GpuBackend backend, CudaApi api, GpuSettings settings, StreamManager streams) {
        this.backend = backend;
        this.api = api;
        this.settings = settings;
        this.streams = streams;
        this.followable = new FollowedWork(api);
        this.thread = new Thread(this::run, "hts-gpu-" + backend.deviceInfo().ordinal());
        Thread t = thread;
        this.wake = () -> LockSupport.unpark(t);
        thread.setDaemon(true);
        this.completions = new DeviceCompletions(
                backend,
                api,
                streams,
                times,
                followable,
                running,
                thread,
                cause -> drainQueue(backend.refusal(), cause));
        this.pollSpinNanos = settings.pollSpinNanos();
    }

    void start() {
        thread.start();
    }

    DeviceTimes times() {
        return times;
    }

    boolean isClosing() {
        return closing;
    }

    /** Whether the calling thread drives the device now (the launcher, or a waiter in {@link #assist}). */
    boolean drivingHere() {
        Thread me = Thread.currentThread();
        return me == thread || driver.get() == me;
    }

    // ------------------------------------------------------------------ any thread

    /** Queues a task for the launcher; hands it back at once when the launcher has exited. */
    void submit(DeviceTask task) {
        queued.incrementAndGet();
        queue.add(task);
        LockSupport.unpark(thread);
        if (exited) {
            drainQueue(backend.refusal(), null); // the launcher may have looked at the queue before the add
        }
    }

    /**
     * Launches a task on the calling thread (the caller of {@code Scheduler.execute}, which waits
     * for the run right after) when the launcher is not launching, nothing is queued before it and
     * a stream is free: no hand-off to the launcher, whose wake-up on a cold core costs tens of
     * microseconds or more. A launcher that holds the token (finishing the report of a previous
     * run, say) is waited for a few microseconds, no longer: the caller would spin for its run
     * anyway. The launcher is then woken to follow the work in flight, in case the caller stops
     * assisting.
     *
     * @return whether it was launched (or dropped, cancelled meanwhile); {@code false}: nothing
     *     happened, {@link #submit} it
     */
    boolean launchHere(DeviceTask task) {
        Thread me = Thread.currentThread();
        if (me == thread || !takeTokenSoon(me)) {
            return false;
        }
        boolean launched = false;
        Object previous = null;
        try {
            if (closing || backend.isDown() || !queue.isEmpty()) {
                return false;
            }
            previous = api.borrow(backend.deviceInfo().ordinal()); // the caller's own context comes back after
            StreamLease lease = streams.tryAcquire();
            if (lease == null) {
                return false;
            }
            running.incrementAndGet();
            launched = true;
            launch(task, lease);
        } finally {
            giveBack(previous);
            driver.set(null);
            if (launched) {
                LockSupport.unpark(thread);
            }
        }
        return true;
    }

    /** Takes the token for a caller within {@link #TOKEN_WAIT_NANOS}, unless tasks are queued or it closes. */
    private boolean takeTokenSoon(Thread me) {
        long deadline = 0;
        while (!closing && queue.isEmpty()) {
            if (driver.compareAndSet(null, me)) {
                return true;
            }
            long now = System.nanoTime();
            if (deadline == 0) {
                deadline = now + TOKEN_WAIT_NANOS;
            } else if (now - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return false;
    }

    /**
     * A caller waiting for a run drives the device for one step when nobody else does: it sees
     * completions and reports them (so its run's end needs no wake-up of the launcher nor of the
     * caller). Bodies, users' completion actions and large copies stay on the launcher thread
     * ({@link DeviceCompletions}); the engine's own short actions (releases, small copies) may run
     * on the waiter, its interrupt kept from them. The reports it makes end the tasks on this
     * thread: the engine then runs their listeners and {@code whenDone} stages here (guarding the
     * waiter's interrupt), while the token is held, as on the launcher.
     * It takes the token only while work is in flight and none is queued, so it never keeps the
     * launcher from launching; the launcher counts a task as running until it has been reported,
     * so the waiter keeps assisting until its run has ended and needs no wake-up.
     *
     * @return whether the device is busy and this caller may keep assisting: {@code false} when it
     *     is idle, closing, or driven by another waiter
     */
    boolean assist() {
        Thread me = Thread.currentThread();
        if (closing || me == thread) {
            return false;
        }
        Thread holder = driver.get();
        if (holder != null && holder != thread) {
            return false; // another waiter assists: this one blocks
        }
        if (holder == thread || running.get() == 0 || !queue.isEmpty()) {
            // the launcher is awake, or has tasks to launch, or nothing is in flight to poll: leave
            // it the token (taking it would make the launcher wait) and keep spinning while busy
            return busy();
        }
        if (!driver.compareAndSet(null, me)) {
            Thread now = driver.get(); // the launcher took it meanwhile (and may have let go): keep assisting
            return (now == null || now == thread) && busy();
        }
        assistedAt = System.nanoTime();
        // the waiter's interrupt is its own: kept out of the completions it runs, given back after
        boolean interrupted = Thread.interrupted();
        Object previous = null;
        try {
            if (!closing) {
                previous = api.borrow(backend.deviceInfo().ordinal()); // the waiter's own context comes back after
                completions.poll(); // bodies and user actions stay on the launcher: no waiter's interrupt or deadline
                // reaches one
            }
        } catch (RuntimeException ex) {
            log.warn("HTS GPU backend {}: a waiting caller's step failed; the launcher goes on", backend.name(), ex);
        } finally {
            giveBack(previous);
            driver.set(null);
            if (interrupted) {
                me.interrupt();
            }
        }
        return !closing && busy();
    }

    /**
     * Leaves a borrowed thread with the context it had; a failure (a poisoned context refuses
     * everything) is logged, never thrown: the thread's own work then meets it.
     */
    private void giveBack(@Nullable Object previous) {
        if (previous == null) {
            return;
        }
        try {
            api.giveBack(previous);
        } catch (RuntimeException ex) {
            log.warn(
                    "HTS GPU backend {}: the calling thread's own CUDA context could not be made current again",
                    backend.name(),
                    ex);
        }
    }

    /** Whether tasks are queued or in flight here (counters any thread may read). */
    private boolean busy() {
        return running.get() + queued.get() > 0;
    }

    /**
     * Stops taking tasks; the launcher finishes what it has, releases the device's resources and
     * exits. Waits up to {@code timeout} for that unless called on the launcher itself (from a
     * completion), which returns at once.
     *
     * @return whether the launcher has exited
     */
    boolean close(long timeout, TimeUnit unit) {
        closing = true;
        LockSupport.unpark(thread);
        if (drivingHere()) {
            return false; // called from a completion this thread is reporting: the launcher finishes the rest
        }
        try {
            return exitedLatch.await(timeout, unit);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return exitedLatch.getCount() == 0;
        }
    }

    /** Whether {@code task} is in flight here and may be followed (called by peers and this launcher). */
    boolean isInFlight(DeviceTask task) {
        return followable.contains(task);
    }

    /** Makes {@code stream} wait on the device for a task's work here, if it is in flight here. */
    boolean orderAfter(DeviceTask predecessor, CudaApi.Stream stream) {
        return followable.orderAfter(predecessor, stream);
    }

    // ------------------------------------------------------------------ the launcher thread

    private void run() {
        boolean releasable = true; // false when a stream's work could not be followed to its end
        try {
            api.makeCurrent(backend.deviceInfo().ordinal());
        } catch (CudaException ex) {
            completions.deviceDown(ex, "making the context current", null);
        }
        try {
            loop();
        } catch (Throwable ex) {
            while (!driver.compareAndSet(null, thread)) {
                Thread.onSpinWait(); // a waiter drives the device for a step: take the device back for good
            }
            log.error("HTS GPU launcher of {} stopped by an unexpected error; its tasks fail", backend.name(), ex);
            backend.down("the launcher of " + backend.name() + " stopped: " + ex);
            releasable = completions.launcherStopped(ex);
        } finally {
            exited = true;
            drainQueue(backend.refusal(), null);
            try {
                if (releasable && !completions.poisoned()) {
                    backend.releaseResources(); // a poisoned context releases nothing through it
                }
            } catch (RuntimeException ex) {
                log.warn("HTS GPU backend {}: releasing its resources failed", backend.name(), ex);
            }
            exitedLatch.countDown();
        }
    }

    private void loop() {
        Thread me = Thread.currentThread();
        int refused = 0;
        while (true) {
            if (!driver.compareAndSet(null, me)) {
                DeviceTimes.waitForToken(++refused); // a waiter polls for one step (microseconds)
                continue;
            }
            refused = 0;
            boolean exit = false;
            boolean idle = false;
            long park; // < 0: look again at once; 0: spin once; > 0: park that long
            try {
                long now = System.nanoTime();
                boolean waiterPolls = assistedAt != 0 && now - assistedAt < ASSIST_FRESH_NANOS;
                // a waiter that polls sees the end and reports it on its own thread, no hand-off
                boolean progress = (!waiterPolls || completions.launcherWanted()) && completions.poll();
                progress |= launchReady();
                if (progress) {
                    times.progress();
                    park = -1;
                } else if (completions.isEmpty()) {
                    if (closing && queue.isEmpty()) {
                        exit = true; // the launcher keeps the token: no waiter drives a closed device
                        return;
                    }
                    backend.housekeeping(true, now);
                    park = times.idleWait(now, pollSpinNanos);
                    idle = true;
                } else {
                    park = settings.spinWhileBusy() ? 0 : times.busyWait(completions.inFlight(), now, pollSpinNanos);
                    if (park > 0) {
                        backend.housekeeping(false, now); // while sleeping through long work, never near an end
                    }
                    if (waiterPolls) {
                        park = Math.max(park, ASSISTED_PARK_NANOS); // looks again in a while, and at its callback
                    }
                }
            } finally {
                if (!exit) {
                    driver.set(null);
                }
            }
            if (park > 0) {
                LockSupport.parkNanos(this, park);
            } else if (park == 0 && idle) {
                spinIdle();
            } else if (park == 0) {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Spins a while without the token, with nothing queued or in flight, so that a caller of
     * {@code execute} finds it free and launches its task itself ({@link #launchHere}); returns
     * early when a task arrives, one was launched, or the backend closes.
     */
    private void spinIdle() {
        for (int i = 0; i < IDLE_SPINS_WITHOUT_TOKEN && queue.isEmpty() && running.get() == 0 && !closing; i++) {
            Thread.onSpinWait();
        }
    }

    private boolean launchReady() {
        boolean any = false;
        while (!queue.isEmpty()) {
            if (backend.isDown()) {
                drainQueue(backend.refusal(), null);
                return true;
            }
            StreamLease lease = streams.tryAcquire();
            if (lease == null) {
                return any;
            }
            DeviceTask task = queue.poll();
            if (task == null) {
                streams.release(lease);
                return any;
            }
            running.incrementAndGet(); // before the queued count drops: busy() never reads 0 between
            queued.decrementAndGet();
            any = true;
            launch(task, lease);
        }
        return any;
    }

    private void launch(DeviceTask task, StreamLease lease) {
        if (!task.start(lease.lane())) {
            streams.release(lease);
            running.decrementAndGet();
            return;
        }
        long t0 = System.nanoTime();
        boolean onLauncher = Thread.currentThread() == thread;
        GpuContext ctx = new GpuContext(backend, task, lease);
        Object result = null;
        Throwable error = null;
        try {
            for (DeviceTask predecessor : task.awaitOnDevice()) {
                backend.orderAfterAnywhere(predecessor, lease.stream());
            }
            result = task.gpuBody().run(ctx);
            ctx.checkResult(result);
        } catch (Throwable ex) {
            error = ex;
        } finally {
            if (onLauncher) {
                Thread.interrupted(); // a flag the body set is not the launcher's; on a caller, the engine settled it
            }
        }
        long[] cell = times.cellFor(task.taskName());
        boolean callback = !settings.spinWhileBusy() && times.needsCallback(cell, !onLauncher);
        CudaApi.Event event = null;
        try {
            event = streams.events().obtain();
            api.record(event, lease.stream());
            if (callback) {
                streams.whenDone(event, wake);
            }
        } catch (CudaException ex) {
            error = InFlight.merge(error, ex);
        }
        // Only a device buffer (or no result) may be read before the task completes, by work ordered
        // after it on the device; anything else may be filled by a completion action.
        boolean onDevice = error == null && event != null && (result == null || result instanceof DeviceBuffer);
        InFlight f = new InFlight(task, ctx, lease, event, result, error, t0, cell, callback, onDevice);
        completions.add(f);
        CudaException sticky = CudaException.stickyIn(error);
        if (sticky != null) {
            completions.deviceDown(sticky, "task '" + task.taskName() + "'", f);
        } else if (onDevice) {
            followable.add(task, event);
            f.handedOut = task.enqueued(result); // the scheduler may now dispatch successors that follow this work
        }
    }

    private void drainQueue(String reason, @Nullable Throwable cause) {
        for (DeviceTask t; (t = queue.poll()) != null; ) {
            queued.decrementAndGet();
            backend.refuse(t, reason, cause);
        }
    }
}
