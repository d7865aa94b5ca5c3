package io.hts.gpu.exec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.blas.CublasLibrary;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.CudaErrorKind;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.kernel.KernelCache;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.memory.PinnedStagingPool;
import io.hts.gpu.stream.StreamLease;
import io.hts.gpu.stream.StreamManager;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's GPU execution backend for one CUDA device: the scheduler dispatches GPU-placed
 * tasks here, and every policy can choose it.
 *
 * <h2>Implementation overview</h2>
 *
 * <p><b>One launcher thread per device</b> owns the device's context. It takes dispatched tasks
 * from a lock-free queue whenever a stream is free, runs each task's GPU body with a
 * {@link GpuContext} bound to a leased stream (the body only <em>enqueues</em> work: copies,
 * kernels, cuBLAS), then records a completion event on the stream and moves on to the next task.
 * The dispatching CPU worker never blocks, and no thread is parked per GPU task.
 *
 * <p><b>Completion by polling events.</b> Between launches the same thread queries the events of
 * the work in flight ({@code cuEventQuery}, about a microsecond); when one has completed it runs
 * the task's completion actions (downloads into Java arrays, releasing scratch and staging memory),
 * returns the stream and reports the outcome to the scheduler, which then readies the successors.
 * With work in flight and nothing to launch it sleeps until shortly before the earliest expected
 * end (the mean device time of tasks of that name, or of all tasks for a new name, less three mean
 * deviations; "shortly" is twice this host's measured {@code parkNanos} oversleep, at least
 * 150 µs), spins
 * through the window where it should end (six deviations plus {@code pollSpin}), then
 * parks. Estimates only decide when to spin: the work of a task expected to take a millisecond or
 * more (or of unknown length) is followed on its stream by a {@code cuLaunchHostFunc} callback
 * that unparks the launcher, so a wrong estimate costs at most that callback's latency (21-38 µs
 * measured), never a missed completion; shorter tasks skip the callback (about 10 µs of host time
 * a launch) and are polled every 50 µs past their window. With nothing in flight
 * the launcher parks until the next dispatch. With {@code spinWhileBusy} the launcher instead
 * spins the whole time work is in flight, as CUDA's default synchronize does. A long GEMM thus costs no CPU while it runs and is seen within microseconds of its
 * end; short tasks are polled by spinning.
 * (Measured on the H200 through JCuda, docs/gpu.md: an event record seen by polling
 * {@code cuEventQuery} 0.5 µs, record + {@code cuEventSynchronize} 0.4 µs but blocking the
 * thread, a {@code cuLaunchHostFunc} callback 27 µs; polling needs no thread per task and lets
 * the same thread launch meanwhile.)
 *
 * <p><b>Device-ordered successors.</b> Once a task's work is enqueued the backend tells the
 * scheduler ({@code DeviceTask.enqueued}); a GPU-only successor whose predecessors are all GPU
 * tasks already enqueued is then dispatched at once, and its stream waits on their completion
 * events on the device, so a chain of dependent GPU tasks keeps the GPU busy the way one stream of
 * calls does; it completes only after them.
 *
 * <p><b>Time limits</b> are the engine's (Resilience4j's {@code TimeLimiter}): a task past its
 * deadline fails and its descendants are cancelled, but its stream, its scratch memory and its
 * staging memory stay held until its device work has really completed, when the late completion
 * is discarded.
 *
 * <p><b>Errors.</b> A body's exception, or a CUDA error surfacing at its event, fails the task
 * (out-of-memory is retryable: the engine retries it if the task allows retries). A sticky CUDA
 * error ({@link CudaErrorKind#STICKY}: an illegal address, a launch failure) poisons the context:
 * the device goes DOWN, its memory pool is poisoned and never reused, the tasks in flight fail
 * with the error's name, queued tasks move to the CPU when they have a CPU body and fail
 * otherwise, and later dispatches do the same.
 */
public final class GpuBackend implements DeviceBackend {

    private static final Logger log = LoggerFactory.getLogger(GpuBackend.class);

    /** At least this long before long work's expected end the poller stops sleeping and spins. */
    private static final long MIN_SPIN_LEAD = 150_000;
    private static final long MAX_SLEEP = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long SHORT_POLL = 50_000;
    private static final long CALLBACK_THRESHOLD = TimeUnit.MILLISECONDS.toNanos(1);

    private final CudaApi api;
    private final DeviceInfo info;
    private final GpuSettings settings;
    private final DeviceMemoryPool memory;
    private final PinnedStagingPool staging;
    private final StreamManager streams;
    private final KernelCache kernels;
    private final @Nullable CublasLibrary cublas;
    private final @Nullable String cublasProblem;
    private final ConcurrentLinkedQueue<DeviceTask> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicInteger running = new AtomicInteger();
    private final Thread launcher;
    /** Enqueued after each task's work: wakes a sleeping launcher when the work has completed. */
    private final Runnable wakeLauncher;
    private final List<InFlight> inFlight = new ArrayList<>();
    /**
     * The completion event of each task in flight, for tasks dispatched to follow it: written by
     * this launcher, read by it and, on a host with several GPUs, by the peers' launchers (a task
     * following work on another device waits for that device's event). Its monitor covers a peer's
     * look-up and wait together, so an event is never recycled between them (a stream waits for
     * the record an event had when the wait was enqueued).
     */
    private final java.util.Map<DeviceTask, CudaApi.Event> inFlightEvents =
            java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>());
    /** The other GPUs of this host ({@link MultiGpuBackend}), whose in-flight work a task here may follow. */
    private volatile List<GpuBackend> peers = List.of();
    private volatile DeviceHealth health;
    private volatile String detail;
    private volatile boolean closing;
    /** The mean device time of all tasks ({@code meanOfAll[0]}), published for {@link #status()}. */
    private volatile long meanTaskNanos = 100_000;
    /** Device time of all tasks: {mean, mean absolute deviation}, for names without a history. */
    private final long[] meanOfAll = new long[2];
    /**
     * How long before an expected end the poller stops sleeping: twice the measured oversleep of
     * {@code parkNanos} on this host (on the H200 machine a 20 µs park sleeps about a
     * millisecond), at least {@link #MIN_SPIN_LEAD}.
     */
    private final long spinLead;
    /** Mean device time per task name (group members under the group's name), launcher thread only. */
    private final java.util.Map<String, long[]> meanByName = new java.util.HashMap<>();
    private volatile long completed;

    private static final class InFlight {
        final DeviceTask task;
        final GpuContext ctx;
        final StreamLease lease;
        final CudaApi.@Nullable Event event;
        final @Nullable Object result;
        @Nullable Throwable error;
        final long startNanos;
        /** Device time of tasks of this name: {mean, mean absolute deviation}, in nanoseconds. */
        final long[] mean;

        /** Whether a completion callback will wake the launcher for this task. */
        final boolean callback;

        InFlight(DeviceTask task, GpuContext ctx, StreamLease lease, CudaApi.@Nullable Event event,
                @Nullable Object result, @Nullable Throwable error, long startNanos, long[] mean, boolean callback) {
            this.task = task;
            this.ctx = ctx;
            this.lease = lease;
            this.event = event;
            this.result = result;
            this.error = error;
            this.startNanos = startNanos;
            this.mean = mean;
            this.callback = callback;
        }
    }

    /**
     * Starts a backend on a device: streams, memory pool, staging memory, kernels and (when
     * {@code loadCublas}) cuBLAS, and the launcher thread.
     *
     * @param api the CUDA API
     * @param info the device
     * @param settings streams, memory and polling
     * @param loadCublas whether to load cuBLAS (its failure only degrades the backend)
     */
    public GpuBackend(CudaApi api, DeviceInfo info, GpuSettings settings, boolean loadCublas) {
        this.api = api;
        this.info = info;
        this.settings = settings;
        api.makeCurrent(info.ordinal());
        this.memory = new DeviceMemoryPool(api, info.ordinal(), settings.memory());
        this.staging = new PinnedStagingPool(api, settings.stagingBytes());
        this.streams = new StreamManager(api, info.ordinal(), settings.streams());
        this.kernels = new KernelCache(api, info);
        CublasLibrary blas = null;
        String problem = loadCublas ? null : "cuBLAS was not loaded for this backend";
        if (loadCublas) {
            try {
                blas = CublasLibrary.load(settings.streams());
            }
            catch (IllegalStateException | LinkageError ex) {
                problem = ex.getMessage();
                log.warn("HTS GPU backend {}: {}", info, problem);
            }
        }
        this.cublas = blas;
        this.cublasProblem = problem;
        this.health = blas != null || !loadCublas ? DeviceHealth.UP : DeviceHealth.DEGRADED;
        this.detail = blas != null || !loadCublas ? info.toString() : info + "; " + problem;
        this.spinLead = Math.max(MIN_SPIN_LEAD, 2 * measureParkOversleep() + 50_000);
        this.launcher = new Thread(this::launchLoop, "hts-gpu-" + info.ordinal());
        Thread t = launcher;
        this.wakeLauncher = () -> LockSupport.unpark(t);
        launcher.setDaemon(true);
        launcher.start();
    }

    /**
     * Discovers the GPUs through JCuda and starts a backend on the first one, or explains why not.
     *
     * @param settings the backend's settings, from the device's total memory
     * @return the backend, or empty (the reason is logged once) when no GPU can be used
     */
    public static Optional<GpuBackend> startOnFirstDevice(java.util.function.LongFunction<GpuSettings> settings) {
        GpuDiscovery.Result found = GpuDiscovery.discover();
        CudaApi api = found.api();
        if (!found.available() || api == null) {
            return Optional.empty();
        }
        DeviceInfo device = found.devices().get(0);
        try {
            return Optional.of(new GpuBackend(api, device, settings.apply(device.totalMemory()), true));
        }
        catch (RuntimeException ex) {
            log.warn("HTS GPU backend could not start on {}; tasks run on the CPU: {}", device, ex.toString());
            return Optional.empty();
        }
    }

    /** The mean oversleep of a short {@code parkNanos} on this host, capped at 5 ms. */
    private static long measureParkOversleep() {
        long worst = 0;
        long total = 0;
        int n = 5;
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            LockSupport.parkNanos(50_000);
            long over = System.nanoTime() - t0 - 50_000;
            total += Math.max(0, over);
            worst = Math.max(worst, over);
        }
        return Math.min(MAX_SLEEP, Math.max(total / n, worst / 2));
    }

    /** How long before expected ends the launcher stops sleeping and spins, for this host's timers. */
    public Duration spinLead() {
        return Duration.ofNanos(spinLead);
    }

    // ------------------------------------------------------------------ DeviceBackend

    @Override
    public Device device() {
        return Device.GPU;
    }

    @Override
    public String name() {
        return "cuda:" + info.ordinal() + " " + info.name();
    }

    @Override
    public DeviceStatus status() {
        int q = queued.get();
        int r = running.get();
        long backlog = (long) (q + r) * meanTaskNanos;
        return new DeviceStatus(Device.GPU, health, health == DeviceHealth.DOWN ? 0 : streams.size(), q, r, backlog,
                health == DeviceHealth.DOWN ? 0 : memory.availableBytes(), detail);
    }

    @Override
    public void dispatch(DeviceTask task) {
        if (health == DeviceHealth.DOWN || closing) {
            reject(task, health == DeviceHealth.DOWN ? detail : "the GPU backend of " + name() + " is closing");
            return;
        }
        queued.incrementAndGet();
        queue.add(task);
        LockSupport.unpark(launcher);
    }

    private void reject(DeviceTask task, String reason) {
        if (!task.fallBackToCpu(reason)) {
            task.fail(new GpuUnavailableException("task '" + task.taskName() + "' cannot run on " + name() + ": "
                    + reason));
        }
    }

    // ------------------------------------------------------------------ accessors for GpuContext

    /** The CUDA API this backend drives (its device's context is made current by its launcher). */
    public CudaApi cuda() {
        return api;
    }

    /** The device this backend runs. */
    public DeviceInfo deviceInfo() {
        return info;
    }

    /** The device's memory pool. */
    public DeviceMemoryPool memory() {
        return memory;
    }

    /** The device's streams. */
    public StreamManager streams() {
        return streams;
    }

    /**
     * The device's pinned (page-locked) host memory: staging for copies, and host buffers of your
     * own for inputs and outputs that should copy at full bandwidth ({@code acquire}, then
     * {@code release} once no copy uses them).
     */
    public PinnedStagingPool pinnedStaging() {
        return staging;
    }

    KernelCache kernels() {
        return kernels;
    }

    Blas blas(StreamLease lease) {
        CublasLibrary c = cublas;
        if (c == null) {
            throw new IllegalStateException("cuBLAS is not available on " + name() + ": " + cublasProblem);
        }
        return c.on(lease);
    }

    /** Why cuBLAS is unavailable, if it is. */
    public Optional<String> cublasProblem() {
        return Optional.ofNullable(cublas == null ? cublasProblem : null);
    }

    /** GPU tasks whose device work has completed, since start. */
    public long completedTasks() {
        return completed;
    }

    // ------------------------------------------------------------------ the launcher thread

    private void launchLoop() {
        try {
            api.makeCurrent(info.ordinal());
        }
        catch (CudaException ex) {
            deviceDown(ex, "making the context current");
        }
        long spinDeadline = 0;
        long idleSince = 0;
        while (true) {
            boolean progress = pollInFlight();
            progress |= launchReady();
            if (progress) {
                spinDeadline = 0;
                idleSince = 0;
                continue;
            }
            if (inFlight.isEmpty()) {
                if (closing && queue.isEmpty()) {
                    return;
                }
                // just idle: the next task of a waiting caller's loop often follows within tens of
                // microseconds; spin that long before parking (a futex wake-up costs about as much)
                long now = System.nanoTime();
                if (idleSince == 0) {
                    idleSince = now;
                }
                if (now - idleSince < settings.pollSpin().toNanos()) {
                    Thread.onSpinWait();
                }
                else {
                    LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
                }
                continue;
            }
            idleSince = 0;
            if (settings.spinWhileBusy()) {
                Thread.onSpinWait();
                continue;
            }
            long now = System.nanoTime();
            long expectedEnd = earliestExpectedEnd();
            if (now < expectedEnd - spinLead) {
                // long work in flight: sleep until shortly before it should end (parking oversleeps,
                // by up to a millisecond on some hosts, so wake early and spin for the end)
                LockSupport.parkNanos(this, Math.min(expectedEnd - spinLead - now, MAX_SLEEP));
                continue;
            }
            if (spinDeadline == 0) {
                spinDeadline = Math.max(now, expectedEnd) + spinWindow();
            }
            if (now < spinDeadline) {
                Thread.onSpinWait();
            }
            else {
                // past the window: a task's completion callback wakes us; tasks expected to be short
                // have none (it costs about 10 µs a launch), so poll for those
                LockSupport.parkNanos(this, allHaveCallbacks() ? MAX_SLEEP : SHORT_POLL);
            }
        }
    }

    /**
     * When the earliest in-flight task may end: its start plus the mean device time of tasks of
     * its name less three mean deviations (its start, before any completed). Keeping the estimate
     * below the true end means a wake-up is never late, so lateness never feeds back into the mean.
     */
    private long earliestExpectedEnd() {
        long earliest = Long.MAX_VALUE;
        for (InFlight f : inFlight) {
            long[] m = estimate(f.mean);
            earliest = Math.min(earliest, f.startNanos + Math.max(0, m[0] - 3 * m[1]));
        }
        return earliest;
    }

    /** How long past the expected end the poller keeps spinning: six mean deviations plus {@code pollSpin}. */
    private long spinWindow() {
        long window = 0;
        for (InFlight f : inFlight) {
            window = Math.max(window, 6 * estimate(f.mean)[1]);
        }
        return window + settings.pollSpin().toNanos();
    }

    /**
     * Whether a task gets a completion callback: when tasks of its name (or, for a new name, all
     * tasks) take a millisecond or more, or nothing is known yet. Short tasks are caught by
     * spinning, and a callback would cost them more than it saves.
     */
    private boolean needsCallback(long[] mean) {
        long[] m = estimate(mean);
        return m[0] == 0 || m[0] + 3 * m[1] >= CALLBACK_THRESHOLD;
    }

    /** A name's {mean, deviation} once it has a history, else that of all tasks. */
    private long[] estimate(long[] mean) {
        return mean[0] != 0 ? mean : meanOfAll;
    }

    private boolean allHaveCallbacks() {
        for (InFlight f : inFlight) {
            if (!f.callback) {
                return false;
            }
        }
        return true;
    }

    private long[] meanFor(String taskName) {
        int bracket = taskName.indexOf('[');
        String name = bracket > 0 ? taskName.substring(0, bracket) : taskName;
        long[] cell = meanByName.get(name);
        if (cell == null) {
            cell = new long[2];
            if (meanByName.size() < 10_000) {
                meanByName.put(name, cell);
            }
        }
        return cell;
    }

    private boolean launchReady() {
        boolean any = false;
        while (!queue.isEmpty()) {
            if (health == DeviceHealth.DOWN) {
                drainQueue();
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
            queued.decrementAndGet();
            any = true;
            launch(task, lease);
        }
        return any;
    }

    private void launch(DeviceTask task, StreamLease lease) {
        if (!task.start(lease.lane())) {
            streams.release(lease);
            return;
        }
        running.incrementAndGet();
        long t0 = System.nanoTime();
        GpuContext ctx = new GpuContext(this, task, lease);
        Object result = null;
        Throwable error = null;
        try {
            for (DeviceTask predecessor : task.awaitOnDevice()) {
                if (!orderAfter(predecessor, lease.stream())) {
                    for (GpuBackend peer : peers) {
                        if (peer.orderAfter(predecessor, lease.stream())) {
                            break;
                        }
                    }
                }
            }
            result = task.gpuBody().run(ctx);
        }
        catch (Throwable ex) {
            error = ex;
        }
        long[] mean = meanFor(task.taskName());
        boolean callback = !settings.spinWhileBusy() && needsCallback(mean);
        CudaApi.Event event = null;
        try {
            event = streams.events().obtain();
            api.record(event, lease.stream());
            if (callback) {
                api.whenDone(lease.stream(), wakeLauncher);
            }
        }
        catch (CudaException ex) {
            if (error == null) {
                error = ex;
            }
            else {
                error.addSuppressed(ex);
            }
        }
        inFlight.add(new InFlight(task, ctx, lease, event, result, error, t0, mean, callback));
        CudaException sticky = sticky(error);
        if (sticky != null) {
            deviceDown(sticky, "task '" + task.taskName() + "'");
        }
        else if (error == null && event != null) {
            inFlightEvents.put(task, event);
            task.enqueued(result); // the scheduler may now dispatch successors that follow this work
        }
    }

    private boolean pollInFlight() {
        boolean any = false;
        for (Iterator<InFlight> it = inFlight.iterator(); it.hasNext(); ) {
            InFlight f = it.next();
            boolean done;
            if (health == DeviceHealth.DOWN) {
                done = true; // a poisoned context completes nothing: fail what is in flight
                if (f.error == null) {
                    f.error = new GpuUnavailableException("the device failed while task '" + f.task.taskName()
                            + "' ran: " + detail);
                }
            }
            else {
                try {
                    // a task that follows others on the device completes after them, never before
                    done = (f.event == null || api.isComplete(f.event)) && predecessorsDone(f.task);
                }
                catch (CudaException ex) {
                    done = true;
                    f.error = ex;
                    if (ex.kind() == CudaErrorKind.STICKY) {
                        deviceDown(ex, "task '" + f.task.taskName() + "'");
                    }
                }
            }
            if (done) {
                it.remove();
                finish(f);
                any = true;
            }
        }
        return any;
    }

    private boolean predecessorsDone(DeviceTask task) {
        for (DeviceTask p : task.awaitOnDevice()) {
            if (inFlightEvents.containsKey(p)) {
                return false;
            }
            for (GpuBackend peer : peers) {
                if (peer.inFlightEvents.containsKey(p)) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Makes {@code stream} (of this or another device) wait on the device for a task's work here,
     * if it is still in flight here; the host does not block.
     *
     * @return whether the task was in flight here
     */
    private boolean orderAfter(DeviceTask predecessor, CudaApi.Stream stream) {
        synchronized (inFlightEvents) {
            CudaApi.Event done = inFlightEvents.get(predecessor);
            if (done == null) {
                return false;
            }
            api.wait(stream, done);
            return true;
        }
    }

    /** Called by {@link MultiGpuBackend}: the other GPUs of the host. */
    void peers(List<GpuBackend> others) {
        this.peers = List.copyOf(others);
    }

    private void finish(InFlight f) {
        inFlightEvents.remove(f.task);
        boolean usable = health != DeviceHealth.DOWN;
        Throwable error = f.error;
        if (usable) {
            for (Runnable action : f.ctx.completionActions()) {
                try {
                    action.run();
                }
                catch (RuntimeException ex) {
                    if (error == null) {
                        error = ex;
                    }
                    else {
                        error.addSuppressed(ex);
                    }
                }
            }
            if (f.event != null) {
                streams.events().recycle(f.event);
            }
            streams.release(f.lease);
        }
        running.decrementAndGet();
        long took = System.nanoTime() - f.startNanos;
        record(f.mean, took);
        record(meanOfAll, took);
        meanTaskNanos = meanOfAll[0];
        completed++;
        if (error == null) {
            f.task.complete(f.result);
        }
        else {
            if (f.result instanceof DeviceBuffer b) {
                b.close(); // the result of a failed attempt reaches nobody
            }
            f.task.fail(error);
        }
    }

    private static void record(long[] m, long took) {
        if (m[0] == 0) {
            m[0] = took;
        }
        else {
            m[1] = (m[1] * 7 + Math.abs(took - m[0])) / 8;
            m[0] = (m[0] * 7 + took) / 8;
        }
    }

    private static @Nullable CudaException sticky(@Nullable Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof CudaException c && c.kind() == CudaErrorKind.STICKY) {
                return c;
            }
        }
        return null;
    }

    private void deviceDown(CudaException error, String where) {
        if (health == DeviceHealth.DOWN) {
            return;
        }
        detail = error.errorName() + " in " + where + " poisoned the CUDA context of " + name()
                + "; the device is DOWN until the application restarts";
        health = DeviceHealth.DOWN;
        memory.poison(error.errorName());
        log.error("HTS GPU backend: {}", detail, error);
        drainQueue();
    }

    private void drainQueue() {
        for (DeviceTask t; (t = queue.poll()) != null; ) {
            queued.decrementAndGet();
            reject(t, detail);
        }
    }

    /**
     * Stops taking tasks, lets the queued and running ones finish, then releases the streams, the
     * staging memory, cuBLAS and the memory pool (buffers still allocated become invalid).
     */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(launcher);
        try {
            launcher.join(TimeUnit.SECONDS.toMillis(30));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        if (health == DeviceHealth.DOWN) {
            return; // nothing of a poisoned context can be released through it
        }
        CublasLibrary c = cublas;
        if (c != null) {
            c.close();
        }
        memory.close(); // waits for pending frees, whose events are on the streams
        staging.close();
        streams.close();
    }

    @Override
    public String toString() {
        return "GpuBackend[" + name() + ", " + health + ", " + streams.size() + " streams, " + memory.statistics() + "]";
    }
}
