package io.hts.gpu.memory;

import io.hts.engine.graph.Releasable;
import io.hts.gpu.cuda.CudaApi;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * Device memory from a {@link DeviceMemoryPool}: {@link #bytes()} usable bytes at
 * {@link #address()} on device {@link #device()}. A GPU task's output buffer can be the input of a
 * downstream GPU task on the same device as it is, with no copy.
 *
 * <p>Give it back once: {@link #close()} from host code when no device work uses it any more (for
 * instance after the task that wrote it has completed), or {@link #closeAfter(CudaApi.Stream)}
 * from a GPU body: the memory is then reused only after the work enqueued on that stream so far
 * has completed, as PyTorch's caching allocator does. A buffer returned as a task's result is
 * {@link Releasable}: the run gives it back by itself once every task that depends on it has
 * completed; the result of a task nothing depends on is the caller's to close.
 */
public final class DeviceBuffer implements AutoCloseable, Releasable {

    /*
     * Release is two steps: released (one compare-and-set: only the first close counts) and
     * returned (the memory is back in the pool: at once, or when the stream work it waited for
     * has completed). Actions registered with whenReleased run once, at returned: a list swapped
     * by compare-and-set, replaced by RETURNED exactly once, by the thread that returns the memory;
     * an action added after that runs at once on the adding thread.
     */
    private static final List<Runnable> RETURNED = java.util.Collections.unmodifiableList(new ArrayList<>(0));

    private final DeviceMemoryPool pool;
    private final MemoryBlock block;
    private final long arenaBase;
    private final long address;
    private final long bytes;
    private final AtomicBoolean released = new AtomicBoolean();
    private final AtomicReference<@Nullable List<Runnable>> onReturn = new AtomicReference<>();

    DeviceBuffer(DeviceMemoryPool pool, MemoryBlock block, long arenaBase, long bytes) {
        this.pool = pool;
        this.block = block;
        this.arenaBase = arenaBase;
        this.address = arenaBase + block.offset();
        this.bytes = bytes;
    }

    /** The device ordinal. */
    public int device() {
        return pool.device();
    }

    /** The device address of the first byte. */
    public long address() {
        return address;
    }

    /** The usable size: the bytes asked for. */
    public long bytes() {
        return bytes;
    }

    /** The pool it came from. */
    public DeviceMemoryPool pool() {
        return pool;
    }

    MemoryBlock block() {
        return block;
    }

    long arenaBase() {
        return arenaBase;
    }

    /** Whether it has been given back. */
    public boolean isReleased() {
        return released.get();
    }

    boolean markReleased() {
        return released.compareAndSet(false, true);
    }

    /** Gives the memory back now: no device work may still use it. Idempotent. */
    @Override
    public void close() {
        pool.release(this, null);
    }

    /**
     * Called by a run once every task that read this buffer has completed (their device work
     * included): gives the memory back now. Idempotent.
     */
    @Override
    public void release() {
        close();
    }

    /**
     * Gives the memory back after the work enqueued on {@code stream} so far has completed.
     * Idempotent. The stream must be one of this buffer's device (its event is recorded there);
     * for a buffer read on another GPU, {@code GpuContext.release} gives it back once that GPU's
     * work is done.
     *
     * @param stream the stream of this buffer's device whose work may still use the buffer
     */
    public void closeAfter(CudaApi.Stream stream) {
        pool.release(this, stream);
    }

    /**
     * Runs {@code action} once this buffer's memory is back in its pool (after {@link #close()},
     * or once the stream work {@link #closeAfter} waited for has completed); at once when it is back
     * already. Used by runs to hold a task's {@code gpu-memory} reservation as long as the buffer.
     *
     * @param action what to run, on the thread that returns the memory
     * @return {@code true}: a device buffer always reports its release
     */
    @Override
    public boolean whenReleased(Runnable action) {
        while (true) {
            List<Runnable> current = onReturn.get();
            if (current == RETURNED) {
                action.run();
                return true;
            }
            List<Runnable> next = new ArrayList<>(current == null ? 1 : current.size() + 1);
            if (current != null) {
                next.addAll(current);
            }
            next.add(action);
            if (onReturn.compareAndSet(current, next)) {
                return true;
            }
        }
    }

    /** Called by the pool once the memory is back (or gone with a poisoned or closed pool). */
    void returned() {
        List<Runnable> actions = onReturn.getAndSet(RETURNED);
        if (actions == null || actions == RETURNED) {
            return;
        }
        for (Runnable a : actions) {
            try {
                a.run();
            } catch (RuntimeException ex) {
                LoggerFactory.getLogger(DeviceBuffer.class).warn("An action on the release of {} failed", this, ex);
            }
        }
    }

    @Override
    public String toString() {
        return "DeviceBuffer[cuda:" + device() + " 0x" + Long.toHexString(address) + ", "
                + MemoryStatistics.bytes(bytes) + (isReleased() ? ", released" : "") + "]";
    }
}
