package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.blas.CublasLibrary;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.cuda.JCudaApi;
import io.hts.gpu.kernel.KernelCache;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.memory.PinnedStagingPool;
import io.hts.gpu.stream.StreamLease;
import io.hts.gpu.stream.StreamManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's GPU execution backend for one CUDA device: the scheduler dispatches GPU-placed
 * tasks here, and every policy can choose it.
 *
 * <p>A GPU body only <em>enqueues</em> work (copies, kernels, cuBLAS) on the stream of the
 * {@link GpuContext} it gets; the task completes when that work has completed on the device.
 * A body that returns a {@link DeviceBuffer} lets GPU-only successors start at once, their work
 * ordered after its on the device; a body that returns anything else (a downloaded array, a direct
 * buffer, a plain value) has its successors start only once it completed. Time limits are the
 * engine's: a timed-out task fails, but its stream and memory stay held until its device work has
 * really completed. A sticky CUDA error takes the device DOWN: the task that raised it fails with
 * it, the others in flight and queued move to the CPU or fail, and later dispatches do the same.
 */
public final class GpuBackend implements DeviceBackend {

    /*
     * Implementation overview.
     *
     * One launcher thread per device (DeviceLauncher) owns the device's context: it takes
     * dispatched tasks from a lock-free queue whenever a stream is free, runs each body with a
     * GpuContext bound to a leased stream, records a completion event and moves on. The
     * dispatching CPU worker never blocks, and no thread is parked per GPU task.
     *
     * Completion by polling events: between launches the launcher queries the events of the work
     * in flight (cuEventQuery, about a microsecond); a completed task's completion actions run
     * (downloads into Java arrays, releasing scratch and staging memory), its stream returns, and
     * the scheduler hears of it. With work in flight and nothing to launch it sleeps until shortly
     * before the earliest expected end (DeviceTimes: the mean device time of tasks of that name
     * less three mean deviations; "shortly" is twice this host's measured parkNanos oversleep, at
     * least 150 us), spins through the window where it should end, then parks. Work of a task
     * expected to take a millisecond or more (or of unknown length) is followed on its stream by a
     * cuLaunchHostFunc callback that unparks the launcher, so a wrong estimate costs at most that
     * callback's latency, never a missed completion; shorter tasks are polled every 50 us past
     * their window. With spinWhileBusy the launcher spins the whole time work is in flight.
     *
     * Status is O(1): counters of queued and running tasks, the mean device time, and the memory
     * pool's counters (DeviceMemoryPool.availableBytes), never a statistics snapshot.
     */

    private static final Logger log = LoggerFactory.getLogger(GpuBackend.class);
    private static final long CLOSE_WAIT_SECONDS = 30;
    private static final long DEVICE_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final CudaApi api;
    private final DeviceInfo info;
    private final GpuSettings settings;
    private final DeviceMemoryPool memory;
    private final PinnedStagingPool staging;
    private final StreamManager streams;
    private final KernelCache kernels;
    private final @Nullable CublasLibrary cublas;
    private final @Nullable String cublasProblem;
    private final DeviceLauncher launcher;
    /** This GPU and the others of its host ({@link MultiGpuBackend}), whose in-flight work a task here may follow. */
    private volatile List<GpuBackend> onHost = List.of(this);

    private volatile DeviceHealth health;
    private volatile String detail;
    /** When housekeeping last asked the driver for free memory; the driving thread's only. */
    private long lastDeviceCheck;

    /**
     * Starts a backend on a device: streams, memory pool, staging memory, kernels and (when
     * {@code loadCublas}, over {@link JCudaApi} only) cuBLAS, and the launcher thread.
     *
     * @param api the CUDA API
     * @param info the device
     * @param settings streams, memory and polling
     * @param loadCublas whether to load cuBLAS (its failure, or an API other than JCuda's, only
     *     degrades the backend and says why in {@link #cublasProblem()})
     * @throws IllegalArgumentException when the memory pool's maximum exceeds the device's memory
     */
    public GpuBackend(CudaApi api, DeviceInfo info, GpuSettings settings, boolean loadCublas) {
        this.api = api;
        this.info = info;
        this.settings = settings;
        api.makeCurrent(info.ordinal());
        this.memory = new DeviceMemoryPool(api, info.ordinal(), settings.memory());
        PinnedStagingPool pinned = null;
        StreamManager lanes = null;
        try {
            pinned = new PinnedStagingPool(api, settings.stagingBytes());
            lanes = new StreamManager(api, info.ordinal(), settings.streams());
        } catch (RuntimeException ex) {
            if (pinned != null) {
                pinned.close();
            }
            memory.close();
            throw ex;
        }
        this.staging = pinned;
        this.streams = lanes;
        this.kernels = new KernelCache(api, info);
        CublasLibrary blas = null;
        String problem = !loadCublas
                ? "cuBLAS was not loaded for this backend"
                : api instanceof JCudaApi
                        ? null
                        // cuBLAS takes JCuda's own streams and device pointers: over any other
                        // CudaApi (a simulation, a wrapper) its calls would fail or corrupt memory
                        : "cuBLAS runs only over JCuda's CUDA API, and this backend runs over "
                                + api.getClass().getName();
        if (problem == null) {
            try {
                blas = CublasLibrary.load(settings.streams());
            } catch (IllegalStateException | LinkageError ex) {
                problem = ex.getMessage();
                log.warn("HTS GPU backend {}: {}", info, problem);
            }
        }
        this.cublas = blas;
        this.cublasProblem = problem;
        this.health = blas != null || !loadCublas ? DeviceHealth.UP : DeviceHealth.DEGRADED;
        this.detail = blas != null || !loadCublas ? info.toString() : info + "; " + problem;
        this.launcher = new DeviceLauncher(this, api, settings, streams);
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
        List<UnusableGpuBackend> failed = new ArrayList<>(1);
        GpuBackend started = GpuStartup.startOne(api, device, settings.apply(device.totalMemory()), true, failed);
        if (started == null) {
            log.warn("HTS GPU backend: {}; tasks run on the CPU", failed.get(0).reason());
        }
        return Optional.ofNullable(started);
    }

    /** How long before expected ends the launcher stops sleeping and spins, for this host's timers. */
    public Duration spinLead() {
        return Duration.ofNanos(launcher.times().spinLead);
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
        int q = launcher.queued.get();
        int r = launcher.running.get();
        long backlog = (long) (q + r) * launcher.times().meanTaskNanos();
        boolean down = health == DeviceHealth.DOWN;
        return new DeviceStatus(
                Device.GPU,
                health,
                down ? 0 : streams.size(),
                q,
                r,
                backlog,
                down ? 0 : memory.availableBytes(),
                detail);
    }

    /**
     * A caller waiting for a run polls this device's completions while it is busy, when the
     * launcher does not: it sees its run's end without a wake-up (the device's context is made
     * current on its thread). It reports the completed tasks to the engine, which ends them on
     * this thread (successors, listeners, {@code whenDone} stages), as the launcher would. Bodies
     * run on the launcher, or on a caller of {@code execute} that launches one itself
     * ({@link #dispatchHere}); completion actions that are user code stay on the launcher.
     */
    @Override
    public boolean assist() {
        return health != DeviceHealth.DOWN && launcher.assist();
    }

    @Override
    public boolean isDeviceThread() {
        return launcher.drivingHere();
    }

    @Override
    public void dispatch(DeviceTask task) {
        if (health == DeviceHealth.DOWN || launcher.isClosing()) {
            refuse(task, refusal(), null);
            return;
        }
        launcher.submit(task);
    }

    /** Launches the task on the calling thread (a caller about to wait for its run) when the launcher is not launching. */
    @Override
    public boolean dispatchHere(DeviceTask task) {
        return health != DeviceHealth.DOWN && launcher.launchHere(task);
    }

    /** Why this backend refuses tasks now (DOWN or closing). */
    String refusal() {
        return health == DeviceHealth.DOWN ? detail : "the GPU backend of " + name() + " is closing";
    }

    /**
     * Hands a task that never started back: to the CPU when it has a CPU body, else fails it. The
     * engine decides both by the attempt's own compare-and-set, so a task cancelled meanwhile
     * stays cancelled and is not counted again.
     */
    void refuse(DeviceTask task, String reason, @Nullable Throwable cause) {
        if (!task.fallBackToCpu(reason)) {
            task.fail(new GpuUnavailableException(
                    "task '" + task.taskName() + "' cannot run on " + name() + ": " + reason, cause));
        }
    }

    boolean isDown() {
        return health == DeviceHealth.DOWN;
    }

    /** Takes the device DOWN with a reason; only the first call counts. */
    synchronized void down(String reason) {
        if (health != DeviceHealth.DOWN) {
            detail = reason;
            health = DeviceHealth.DOWN;
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

    /** The settings this backend was started with: streams, memory pool, staging, polling. */
    public GpuSettings settings() {
        return settings;
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

    // ------------------------------------------------------------------ across devices

    /** Called by {@link MultiGpuBackend}: the other GPUs of the host. */
    void peers(List<GpuBackend> others) {
        List<GpuBackend> all = new ArrayList<>(others.size() + 1);
        all.add(this);
        all.addAll(others);
        this.onHost = List.copyOf(all);
    }

    /** Whether another GPU of the host (joined by {@link MultiGpuBackend}) can still take work. */
    boolean anotherDeviceUsable() {
        for (GpuBackend gpu : onHost) {
            if (gpu != this && !gpu.isDown()) {
                return true;
            }
        }
        return false;
    }

    /** Orders {@code stream}'s work after a predecessor's, wherever on this host it is in flight. */
    void orderAfterAnywhere(DeviceTask predecessor, CudaApi.Stream stream) {
        for (GpuBackend gpu : onHost) {
            if (gpu.launcher.orderAfter(predecessor, stream)) {
                return;
            }
        }
    }

    /** Whether every task {@code task} follows on the device has been reported complete, here or on a peer. */
    boolean predecessorsDone(DeviceTask task) {
        for (DeviceTask p : task.awaitOnDevice()) {
            for (GpuBackend gpu : onHost) {
                if (gpu.launcher.isInFlight(p)) {
                    return false;
                }
            }
        }
        return true;
    }

    // ------------------------------------------------------------------ lifecycle

    /**
     * The launcher has nothing to launch or finish: it is idle, or about to sleep through long
     * device work (never when a completion is due: the query below costs several times more while a
     * kernel runs than on an idle device, docs/gpu.md). Every 10 ms it asks the driver for the device's
     * free memory, which bounds what {@code status()} reports (another process or pool may have
     * taken some). With nothing in flight (timed-out tasks whose device work still runs count as in
     * flight), kernel modules evicted from the cache are unloaded, when no kernel of theirs can be
     * running: one volatile read when none was evicted.
     */
    void housekeeping(boolean nothingInFlight, long now) {
        if (health == DeviceHealth.DOWN) {
            return;
        }
        try {
            if (now - lastDeviceCheck > DEVICE_CHECK_NANOS) {
                lastDeviceCheck = now;
                memory.refreshDeviceFree();
            }
            if (nothingInFlight) {
                kernels.unloadEvicted();
            }
        } catch (RuntimeException ex) {
            log.warn("HTS GPU backend {}: housekeeping failed", name(), ex);
        }
    }

    /**
     * Stops taking tasks; the launcher finishes the queued and running ones, then releases the
     * streams, the staging memory, cuBLAS and the memory pool (buffers still allocated become
     * invalid). Waits up to 30 s for that, except when called from the launcher itself (a
     * completion that ends a run whose end closes the scheduler), which returns at once.
     */
    @Override
    public void close() {
        if (!launcher.close(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS) && !launcher.drivingHere()) {
            log.warn(
                    "HTS GPU backend {}: device work still in flight after {} s; its resources are released when"
                            + " it ends",
                    name(),
                    CLOSE_WAIT_SECONDS);
        }
    }

    /**
     * Called once, by the launcher as it exits, unless the context is poisoned or a stream's work
     * could not be followed to its end: gives the device's resources back.
     */
    void releaseResources() {
        CublasLibrary c = cublas;
        if (c != null) {
            c.close();
        }
        try {
            kernels.close();
        } catch (RuntimeException ex) {
            log.warn("HTS GPU backend {}: unloading kernel modules failed", name(), ex);
        }
        memory.close(); // waits for pending frees, whose events are on the streams
        staging.close();
        streams.close();
    }

    @Override
    public String toString() {
        return "GpuBackend[" + name() + ", " + health + ", " + streams.size() + " streams, " + memory.statistics()
                + "]";
    }
}
