package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.ForwardingTaskContext;
import io.hts.engine.graph.GpuTaskContext;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.kernel.Kernel;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.memory.PinnedStagingPool;
import io.hts.gpu.stream.StreamLease;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a GPU body works with: its device, its stream, the device memory pool, copies, kernels and
 * cuBLAS. Reach it from the engine's context with {@code ctx.unwrap(GpuContext.class)}.
 *
 * <p><b>Everything is asynchronous.</b> A body enqueues work on {@link #stream()} and returns;
 * the task completes when that work has completed on the device (an event the backend polls), and
 * only then do downstream tasks start. A body must not wait for the device itself.
 * {@link #download} therefore returns an array that is filled by the time the task completes;
 * {@link #scratch} memory is released, and staging memory unpinned, when the task's device work
 * has completed, even when the task timed out on the host meanwhile.
 */
public final class GpuContext extends ForwardingTaskContext implements GpuTaskContext {

    /** The largest completion copy a waiting caller runs (about 0.1 ms of memcpy); larger ones are the launcher's. */
    static final long WAITER_COPY_BYTES = 1L << 20;

    private final GpuBackend backend;
    private final DeviceTask task;
    private final StreamLease lease;
    private final List<Runnable> onDeviceDone = new ArrayList<>();
    private final List<DeviceBuffer> scratch = new ArrayList<>(2);
    /** Whether a completion action is user code or a large copy: then only the launcher finishes the task. */
    private boolean finishesOnLauncher;
    /** Set when the completion actions start running (on the thread finishing the task). */
    private boolean completing;

    GpuContext(GpuBackend backend, DeviceTask task, StreamLease lease) {
        super(task.context());
        this.backend = backend;
        this.task = task;
        this.lease = lease;
    }

    // ------------------------------------------------------------------ device, stream, memory

    @Override
    public int deviceOrdinal() {
        return backend.deviceInfo().ordinal();
    }

    int backendSms() {
        return backend.deviceInfo().multiprocessors();
    }

    /** The stream this task's work goes on. */
    public CudaApi.Stream stream() {
        requireRunning();
        return lease.stream();
    }

    /** The stream's lane (its index among the device's streams). */
    public int lane() {
        return lease.lane();
    }

    /** The CUDA API, for calls this context does not wrap (the device's context is current). */
    public CudaApi cuda() {
        return backend.cuda();
    }

    /** The device memory pool. */
    public DeviceMemoryPool memory() {
        return backend.memory();
    }

    /**
     * Device memory the caller owns: return it as the task's result (a downstream GPU task reads
     * it in place) or release it with {@link #release}.
     *
     * @param bytes at least 1
     * @return the buffer
     */
    public DeviceBuffer allocate(long bytes) {
        return backend.memory().allocate(bytes);
    }

    /**
     * Device memory for this task only, released when its device work has completed.
     *
     * @param bytes at least 1
     * @return the buffer
     */
    public DeviceBuffer scratch(long bytes) {
        requireRunning(); // refused before anything is allocated
        DeviceBuffer b = allocate(bytes);
        onDeviceDone.add(b::close);
        scratch.add(b);
        return b;
    }

    /**
     * Refuses a result that cannot be handed on: a buffer already given back, or this task's
     * scratch memory (released when its work completes, under any reader).
     */
    void checkResult(@Nullable Object result) {
        if (result instanceof DeviceBuffer b) {
            if (b.isReleased()) {
                throw new IllegalStateException("task '" + task.taskName() + "' returned " + b + ", which was given"
                        + " back already; return a buffer from allocate(...) and do not release it");
            }
            for (DeviceBuffer s : scratch) {
                if (s == b) {
                    throw new IllegalStateException("task '" + task.taskName() + "' returned its scratch memory " + b
                            + ", which is released when its work completes; return a buffer from allocate(...)");
                }
            }
        }
    }

    /**
     * Releases a buffer once the work enqueued on this task's stream so far has completed. A buffer
     * of another GPU of this host (read here through {@link #onThisDevice}) is given back to its
     * own pool when this task's device work has completed, without touching its device's context
     * from this device's thread.
     *
     * @param buffer the buffer
     */
    public void release(DeviceBuffer buffer) {
        if (buffer.device() != deviceOrdinal()) {
            actions().add(buffer::close);
            return;
        }
        buffer.closeAfter(stream());
    }

    /**
     * Makes this task's stream wait, on the device, for the work enqueued so far on another
     * stream (the host does not block).
     *
     * @param producer the other stream
     */
    public void waitFor(CudaApi.Stream producer) {
        CudaApi.Event e = backend.streams().order(stream(), producer);
        onDeviceDone.add(() -> backend.streams().events().recycle(e));
    }

    // ------------------------------------------------------------------ copies

    /**
     * Copies floats to new device memory, asynchronously through pinned staging memory.
     *
     * @param data the values
     * @return a buffer the caller owns (like {@link #allocate})
     */
    public DeviceBuffer upload(float[] data) {
        DeviceBuffer b = allocate(Math.max(1, (long) data.length * Float.BYTES));
        upload(data, b);
        return b;
    }

    /**
     * Copies floats into device memory, asynchronously through pinned staging memory.
     *
     * @param data the values
     * @param target at least {@code data.length * 4} bytes
     */
    public void upload(float[] data, DeviceBuffer target) {
        long bytes = (long) data.length * Float.BYTES;
        requireSize(target, bytes);
        if (bytes == 0) {
            return;
        }
        PinnedStagingPool.Staging s = staging(bytes);
        s.buffer().asFloatBuffer().put(data);
        backend.cuda().copyToDevice(target.address(), s.buffer(), bytes, stream());
    }

    /**
     * Copies bytes from a direct buffer (from its position) into device memory. The buffer must not
     * change until the task completes; a pinned buffer makes the copy truly asynchronous.
     *
     * @param source host memory
     * @param target at least {@code source.remaining()} bytes
     */
    public void upload(ByteBuffer source, DeviceBuffer target) {
        requireSize(target, source.remaining());
        backend.cuda().copyToDevice(target.address(), source, source.remaining(), stream());
        onDeviceDone.add(() -> Reference.reachabilityFence(source)); // its memory must outlive the copy
    }

    /**
     * Copies device memory to a float array, asynchronously: the array is filled by the time this
     * task completes (downstream tasks see the values), not when this method returns.
     *
     * @param source at least {@code target.length * 4} bytes
     * @param target the array to fill
     * @return {@code target}, for returning it as the task's result
     */
    public float[] download(DeviceBuffer source, float[] target) {
        long bytes = (long) target.length * Float.BYTES;
        requireSize(source, bytes);
        if (bytes == 0) {
            return target;
        }
        PinnedStagingPool.Staging s = staging(bytes);
        backend.cuda().copyToHost(s.buffer(), source.address(), bytes, stream());
        onDeviceDone.add(0, () -> s.buffer().asFloatBuffer().get(target)); // before the staging is released
        finishesOnLauncher |= bytes > WAITER_COPY_BYTES;
        return target;
    }

    /**
     * Copies device memory into a direct buffer (from its position, {@code target.remaining()}
     * bytes), asynchronously: the bytes are there by the time this task completes. A pinned buffer
     * (for instance from {@link GpuBackend#pinnedStaging()}) makes the copy run at full bandwidth
     * and overlap with the host; the buffer's position does not move.
     *
     * @param source at least {@code target.remaining()} bytes
     * @param target host memory
     */
    public void download(DeviceBuffer source, ByteBuffer target) {
        requireSize(source, target.remaining());
        if (target.remaining() == 0) {
            return;
        }
        backend.cuda().copyToHost(target, source.address(), target.remaining(), stream());
        onDeviceDone.add(() -> Reference.reachabilityFence(target));
    }

    /**
     * Copies between device buffers on this task's stream.
     *
     * @param source read from its start
     * @param target written from its start
     * @param bytes how many
     */
    public void copy(DeviceBuffer source, DeviceBuffer target, long bytes) {
        requireSize(source, bytes);
        requireSize(target, bytes);
        backend.cuda().copyOnDevice(target.address(), source.address(), bytes, stream());
    }

    /**
     * The buffer on this task's device: itself when it is here, otherwise a copy of it in scratch
     * memory here, made on this task's stream from the other device ({@code cuMemcpyPeerAsync},
     * over NVLink where the GPUs have it). The copy follows the buffer's producer when this task
     * was ordered after it on the device, or after its completion.
     *
     * @param buffer a buffer of any GPU of this host
     * @return a buffer on this device with the same bytes (released with this task's work when a copy)
     */
    public DeviceBuffer onThisDevice(DeviceBuffer buffer) {
        int here = deviceOrdinal();
        if (buffer.device() == here) {
            return buffer;
        }
        DeviceBuffer local = scratch(buffer.bytes());
        backend.cuda().copyPeer(local.address(), here, buffer.address(), buffer.device(), buffer.bytes(), stream());
        return local;
    }

    private PinnedStagingPool.Staging staging(long bytes) {
        requireRunning(); // refused before anything is acquired
        PinnedStagingPool.Staging s = backend.pinnedStaging().acquire(bytes);
        onDeviceDone.add(() -> backend.pinnedStaging().release(s));
        return s;
    }

    private static void requireSize(DeviceBuffer b, long bytes) {
        if (b.bytes() < bytes) {
            throw new IllegalArgumentException(b + " holds " + b.bytes() + " bytes; the operation needs " + bytes);
        }
    }

    // ------------------------------------------------------------------ kernels and cuBLAS

    /**
     * Launches a kernel on this task's stream.
     *
     * @param kernel the kernel ({@link #kernels()} for the built-in ones, {@link #kernel} for yours),
     *     looked up in this body
     * @param grid blocks per grid
     * @param block threads per block
     * @param arguments the kernel's arguments
     * @throws IllegalStateException when the kernel was kept from an earlier task and its module has
     *     since been evicted from the device's kernel cache and unloaded
     */
    public void launch(Kernel kernel, Dim3 grid, Dim3 block, KernelArguments arguments) {
        launch(kernel, grid, block, 0, arguments);
    }

    /**
     * Launches a kernel with dynamic shared memory on this task's stream.
     *
     * @param kernel the kernel
     * @param grid blocks per grid
     * @param block threads per block
     * @param sharedBytes dynamic shared memory per block
     * @param arguments the kernel's arguments
     * @throws IllegalStateException when the kernel's module has been unloaded ({@link #kernel})
     */
    public void launch(Kernel kernel, Dim3 grid, Dim3 block, int sharedBytes, KernelArguments arguments) {
        backend.cuda().launch(kernel.function(), grid, block, sharedBytes, stream(), arguments);
    }

    /** HTS's built-in kernels (AXPY, scale, fill, sum), loaded on this device once. */
    public BuiltinOps kernels() {
        return new BuiltinOps(this, backend.kernels());
    }

    /**
     * A kernel from PTX, loaded on this device once per distinct PTX text (the whole text is the
     * key). The device keeps a bounded number of modules, least recently used evicted and unloaded
     * once the device is idle, so look kernels up in each body (a hit allocates nothing) rather
     * than keep them across tasks: a kept kernel of an unloaded module fails at launch.
     *
     * @param ptx the PTX module
     * @param name the kernel's extern "C" name
     * @return the kernel
     */
    public Kernel kernel(String ptx, String name) {
        return backend.kernels().fromPtx(ptx, name);
    }

    /**
     * A kernel from CUDA C source, compiled by NVRTC once per distinct source and loaded; cached as
     * {@link #kernel} (look it up in each body).
     *
     * @param source CUDA C source with the kernel declared {@code extern "C" __global__}
     * @param name the kernel's name
     * @return the kernel
     * @throws IllegalStateException when NVRTC cannot be loaded (the message says how to fix it)
     */
    public Kernel compile(String source, String name) {
        return backend.kernels().fromSource(source, name);
    }

    /** cuBLAS bound to this task's stream. */
    public io.hts.gpu.blas.Blas blas() {
        requireRunning();
        return backend.blas(lease);
    }

    /**
     * Runs an action once this task's device work has completed, before the task completes (or
     * after it timed out), on the device's launcher thread (never on a caller waiting for a run, so
     * a slow action delays no caller's deadline and no interrupt passes between an action and a
     * caller). An action that throws (an {@code Error} too) fails the task; the others still run.
     * An interrupt flag an action leaves set is cleared after the task's actions. An action may
     * not register another action nor use this context's device operations: that throws an
     * {@link IllegalStateException}, which fails the task.
     *
     * @param action the action
     * @throws IllegalStateException when called from a completion action
     */
    public void onDeviceDone(Runnable action) {
        actions().add(action);
        finishesOnLauncher = true;
    }

    /**
     * The completion actions, once, as the task's device work has completed: from here on nothing
     * more may be registered (an action that registers one, or calls a device operation, fails its task).
     */
    List<Runnable> completionActions() {
        completing = true;
        return onDeviceDone;
    }

    /** Where device operations and {@link #onDeviceDone} register their actions; refused once completing. */
    private List<Runnable> actions() {
        requireRunning();
        return onDeviceDone;
    }

    /** Device work and actions may be added only until the task's completion actions start. */
    private void requireRunning() {
        if (completing) {
            throw new IllegalStateException("task '" + task.taskName() + "': its device work has completed and its"
                    + " completion actions are running; a completion action cannot register another action nor"
                    + " enqueue device work (do the follow-up in the action itself, or in a successor task)");
        }
    }

    /**
     * Whether only the launcher may finish this task: it has a user's completion action, or copies
     * more than {@link #WAITER_COPY_BYTES} from staging memory on completion. A waiting caller
     * finishes the others (engine actions of microseconds: releases and small copies).
     */
    boolean finishesOnLauncher() {
        return finishesOnLauncher;
    }

    // ------------------------------------------------------------------ engine context

    @Override
    public <C> C unwrap(Class<C> type) {
        if (type.isInstance(this)) {
            return type.cast(this);
        }
        throw new IllegalArgumentException(
                "the GPU context is a " + GpuContext.class.getName() + ", not a " + type.getName());
    }

    @Override
    public Device device() {
        return Device.GPU;
    }

    @Override
    public boolean isCancelled() {
        return task.isCancelled();
    }
}
