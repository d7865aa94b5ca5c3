package io.hts.gpu.memory;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.CudaErrorKind;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.EventPool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The device memory of one GPU, handed out as {@link DeviceBuffer}s: arenas reserved with
 * {@code cuMemAlloc} (power-of-two sizes) and carved up by one {@link BuddyAllocator} each, so an
 * allocation after warm-up is Java work instead of a driver call (docs/gpu.md has both costs).
 */
public final class DeviceMemoryPool implements AutoCloseable {

    /*
     * Implementation overview.
     *
     * Growth. The pool starts with arenas covering {@code initialBytes} and adds an arena
     * of {@code arenaBytes} (or of the request rounded up to a power of two, when larger) whenever no
     * arena can serve a request, until {@code maximumBytes} are reserved. Arenas are never returned
     * to the driver before {@link #close()}: like PyTorch's caching allocator, the pool keeps what it
     * took.
     *
     * Stream-ordered reuse. A buffer released with a stream ({@link
     * DeviceBuffer#closeAfter}) may still be read or written by work queued on that stream. The pool
     * records an event on the stream and keeps the block <em>pending</em>; it returns to its buddy
     * allocator only when the event has completed. Pending blocks are reclaimed, oldest first, at the
     * next allocation and whenever memory runs short, waiting on their events (host-side) only when
     * nothing else can serve the request.
     *
     * Reuse by size. Released blocks of up to 1/16 of an arena are kept by size class in a
     * {@link FreeBlockCache} (striped by thread, 16 a class and stripe, at most one arena's worth in
     * all) and handed out again with one short critical section; others return to their buddy at once
     * and coalesce.
     *
     * Order of attempts for an allocation: the cache; the arenas as they are; after
     * reclaiming the completed pending blocks; after flushing the cache into the buddies; a new arena,
     * if the limit allows; after waiting for the pending blocks one by one. Then it fails with {@link MemoryExhaustedException} carrying the statistics.
     *
     * Poisoning. After a sticky CUDA error the context is unusable and so is everything
     * allocated in it: {@link #poison} makes every later allocation fail with the error's name, and
     * {@link #close()} no longer calls the driver for those arenas.
     *
     * Threads. Allocation and release are thread-safe: the buddies are, the cache is striped
     * by thread, arenas are a copy-on-write list grown under a lock, pending blocks a lock-free queue.
     * A cache hit and a cached release touch no counter shared by all threads; the high-water mark is
     * kept on the buddy path (it counts what the pool took from its arenas, cached blocks included). Calls that reach the
     * driver make the pool's device current on the calling thread first.
     */

    private final CudaApi api;
    private final int device;
    private final PoolSettings settings;
    private final EventPool events;
    private final List<Arena> arenas = new CopyOnWriteArrayList<>();
    private final Object growLock = new Object();
    private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
    private final AtomicLong pendingBytes = new AtomicLong();
    private final AtomicLong reserved = new AtomicLong();
    /** Bytes taken from the arenas' buddies (cached blocks included); changed only on cache misses. */
    private final AtomicLong taken = new AtomicLong();

    private final AtomicLong highWater = new AtomicLong();
    private final LongAdder failures = new LongAdder();
    /** The device's memory in all, from the driver at construction. */
    private final long deviceTotal;
    /**
     * The device's free memory as the driver last reported it (at construction and whenever the
     * pool grows or fails to), which bounds what the pool can still reserve whatever its limit.
     */
    private volatile long deviceFree;

    private final FreeBlockCache cache;
    private volatile @Nullable String poisoned;
    private volatile boolean closed;

    private record Arena(long base, BuddyAllocator allocator) {}

    private record Pending(DeviceBuffer buffer, CudaApi.Event event) {}

    /**
     * Creates a pool and reserves its initial arenas.
     *
     * @param api the CUDA API
     * @param device the device ordinal
     * @param settings sizes and limits
     * @throws CudaException when the initial reservation fails
     */
    public DeviceMemoryPool(CudaApi api, int device, PoolSettings settings) {
        this.api = api;
        this.device = device;
        this.settings = settings;
        long[] info = api.memoryInfo();
        this.deviceTotal = info[1];
        this.deviceFree = info[0];
        if (settings.maximumBytes() > deviceTotal) {
            throw new IllegalArgumentException("hts.gpu.memory-pool.maximum of "
                    + MemoryStatistics.bytes(settings.maximumBytes()) + " is more than the "
                    + MemoryStatistics.bytes(deviceTotal) + " of memory of cuda:" + device + "; accepted is at most the"
                    + " device's memory, such as " + MemoryStatistics.bytes(deviceTotal / 10 * 9)
                    + " (90 %, the default when unset)");
        }
        this.events = new EventPool(api);
        this.cache = new FreeBlockCache(
                Long.numberOfTrailingZeros(settings.arenaBytes() / settings.minimumBlock()),
                Math.max(settings.minimumBlock(), settings.arenaBytes() / 16),
                settings.arenaBytes());
        // in arenas of powers of two of at least the minimum block: an initial size that is not a multiple
        // of it (90 % of a device's memory, where the maximum caps the initial size) is rounded down to one
        long initial = settings.initialBytes() / settings.minimumBlock() * settings.minimumBlock();
        while (reserved.get() < initial) {
            addArena(Math.min(settings.arenaBytes(), Long.highestOneBit(initial - reserved.get())));
        }
    }

    /** The device ordinal. */
    public int device() {
        return device;
    }

    /** The pool's settings. */
    public PoolSettings settings() {
        return settings;
    }

    /**
     * Allocates at least {@code bytes} of device memory.
     *
     * @param bytes at least 1
     * @return the buffer
     * @throws MemoryExhaustedException when neither the arenas, nor a new arena within the limit,
     *     nor the pending blocks can serve it
     * @throws IllegalStateException when the pool is closed or poisoned
     */
    public DeviceBuffer allocate(long bytes) {
        DeviceBuffer b = tryAllocate(bytes);
        if (b == null) {
            throw new MemoryExhaustedException(
                    "the memory pool of cuda:" + device + " cannot allocate " + MemoryStatistics.bytes(bytes)
                            + shortage(bytes),
                    bytes,
                    statistics());
        }
        return b;
    }

    /**
     * Allocates like {@link #allocate}, or returns {@code null} when memory is exhausted.
     *
     * @param bytes at least 1
     * @return the buffer, or {@code null}
     */
    public @Nullable DeviceBuffer tryAllocate(long bytes) {
        checkUsable();
        if (bytes <= 0) {
            throw new IllegalArgumentException("an allocation needs at least 1 byte, asked for " + bytes);
        }
        DeviceBuffer b = fromCache(bytes);
        if (b == null) {
            b = fromArenas(bytes);
        }
        if (b == null && reclaim(false)) {
            b = fromArenas(bytes);
        }
        if (b == null && drainCache()) {
            b = fromArenas(bytes);
        }
        if (b == null) {
            b = fromNewArena(bytes);
        }
        while (b == null && reclaimOldest()) {
            b = fromArenas(bytes);
        }
        if (b == null) {
            failures.increment();
        }
        return b;
    }

    /** Why a request cannot be served: the device's size, the pool's limit, or the device's free memory. */
    private String shortage(long bytes) {
        if (bytes > deviceTotal) {
            return ": cuda:" + device + " has " + MemoryStatistics.bytes(deviceTotal) + " of memory in all";
        }
        long block = blockFor(bytes);
        if (reserved.get() + Math.max(block, settings.arenaBytes()) <= settings.maximumBytes()) {
            return ": cuda:" + device + " has " + MemoryStatistics.bytes(deviceFree) + " free (other contexts or"
                    + " processes hold the rest), within the pool's limit of "
                    + MemoryStatistics.bytes(settings.maximumBytes()) + " (hts.gpu.memory-pool.maximum)";
        }
        return " within its limit of " + MemoryStatistics.bytes(settings.maximumBytes())
                + " (hts.gpu.memory-pool.maximum)"
                + (block > bytes
                        ? "; it takes a block of " + MemoryStatistics.bytes(block) + " (sizes round up to a power"
                                + " of two)"
                        : "");
    }

    private void checkUsable() {
        String p = poisoned;
        if (p != null) {
            throw new IllegalStateException(
                    "the memory pool of cuda:" + device + " is poisoned by " + p + " and can no longer be used");
        }
        if (closed) {
            throw new IllegalStateException("the memory pool of cuda:" + device + " is closed");
        }
    }

    private @Nullable DeviceBuffer fromCache(long bytes) {
        int order = BuddyAllocator.orderFor(bytes, settings.minimumBlock());
        FreeBlockCache.Entry e = cache.take(order);
        return e == null ? null : new DeviceBuffer(this, e.block(), e.arenaBase(), bytes);
    }

    private @Nullable DeviceBuffer fromArenas(long bytes) {
        for (Arena a : arenas) {
            MemoryBlock block = a.allocator().tryAllocate(bytes);
            if (block != null) {
                return handOut(block, a.base(), bytes);
            }
        }
        return null;
    }

    /** A block just taken from a buddy: counted towards the high-water mark, then handed out. */
    private DeviceBuffer handOut(MemoryBlock block, long arenaBase, long bytes) {
        long u = taken.addAndGet(block.size());
        long h;
        while (u > (h = highWater.get()) && !highWater.compareAndSet(h, u)) {
            Thread.onSpinWait();
        }
        return new DeviceBuffer(this, block, arenaBase, bytes);
    }

    private boolean drainCache() {
        long bytes = cache.drainTo();
        taken.addAndGet(-bytes);
        return bytes > 0;
    }

    private @Nullable DeviceBuffer fromNewArena(long bytes) {
        long size = Math.max(settings.arenaBytes(), blockFor(bytes));
        synchronized (growLock) {
            DeviceBuffer b = fromArenas(bytes); // another thread may have grown the pool meanwhile
            if (b != null) {
                return b;
            }
            if (reserved.get() + size > settings.maximumBytes()) {
                return null;
            }
            try {
                addArena(size);
            } catch (CudaException ex) {
                if (ex.kind() == CudaErrorKind.OUT_OF_MEMORY) {
                    refreshDeviceFree();
                    return null; // the device has less free memory than the limit allows
                }
                throw ex;
            }
            return fromArenas(bytes);
        }
    }

    private long blockFor(long bytes) {
        return settings.minimumBlock() << BuddyAllocator.orderFor(bytes, settings.minimumBlock());
    }

    private void addArena(long size) {
        api.makeCurrent(device);
        long base = api.allocate(size);
        arenas.add(new Arena(base, new BuddyAllocator(size, settings.minimumBlock())));
        reserved.addAndGet(size);
        refreshDeviceFree();
    }

    /**
     * Asks the driver for the device's free memory now (a driver call: the device's context must be
     * current), which bounds what {@link #availableBytes()} reports. The GPU backend's launcher calls
     * it every 10 ms; the pool itself whenever it grows or fails to.
     */
    public void refreshDeviceFree() {
        try {
            deviceFree = api.memoryInfo()[0];
        } catch (CudaException ex) {
            deviceFree = 0; // a device that cannot say has nothing to give
        }
    }

    void release(DeviceBuffer buffer, CudaApi.@Nullable Stream stream) {
        if (buffer.pool() != this) {
            throw new IllegalArgumentException(buffer + " belongs to the pool of cuda:" + buffer.device());
        }
        if (!buffer.markReleased()) {
            return;
        }
        if (poisoned != null || closed) {
            buffer.returned(); // a poisoned pool's memory is never reused; a closed pool's is gone
            return;
        }
        if (stream == null) {
            giveBack(buffer);
            return;
        }
        api.makeCurrent(device);
        CudaApi.Event e = events.obtain();
        api.record(e, stream);
        pendingBytes.addAndGet(buffer.block().size());
        pending.add(new Pending(buffer, e));
    }

    private void giveBack(DeviceBuffer buffer) {
        if (!cache.offer(buffer.block(), buffer.arenaBase())) {
            taken.addAndGet(-buffer.block().size());
            buffer.block().allocator().free(buffer.block());
        }
        buffer.returned();
    }

    /**
     * Returns the pending blocks whose stream work has completed to their arenas.
     *
     * @param wait whether to wait on the host for every pending block's work
     * @return whether any block was returned
     */
    public boolean reclaim(boolean wait) {
        boolean any = false;
        for (Pending p : pending) {
            boolean done = wait ? waitFor(p) : api.isComplete(p.event());
            if (done && pending.remove(p)) {
                finish(p);
                any = true;
            }
        }
        return any;
    }

    private boolean reclaimOldest() {
        Pending p = pending.peek();
        if (p == null) {
            return false;
        }
        waitFor(p);
        if (pending.remove(p)) {
            finish(p);
        }
        return true;
    }

    private boolean waitFor(Pending p) {
        api.makeCurrent(device);
        api.synchronize(p.event());
        return true;
    }

    private void finish(Pending p) {
        pendingBytes.addAndGet(-p.buffer().block().size());
        events.recycle(p.event());
        giveBack(p.buffer());
    }

    /** A snapshot: reserved, used, pending, largest free block, fragmentation, high water, failures. */
    public MemoryStatistics statistics() {
        List<MemoryStatistics> parts = new ArrayList<>();
        for (Arena a : arenas) {
            parts.add(a.allocator().statistics());
        }
        long[] cached = cache.held();
        return MemoryStatistics.combine(
                parts, settings.maximumBytes(), pendingBytes.get(), cached, highWater.get(), failures.sum());
    }

    /**
     * Free device memory the pool could still use: free in its arenas (cached blocks included) plus
     * what it may still reserve, which is bounded by its limit and by the device's free memory as
     * the driver last reported it. O(1): counters only, no lock, no walk over arenas or blocks, for
     * the scheduling path.
     */
    public long availableBytes() {
        long capacity = reserved.get();
        long free = Math.max(0, capacity - taken.get()) + cache.heldBytes();
        long growth = Math.max(0, Math.min(settings.maximumBytes() - capacity, deviceFree));
        return free + growth;
    }

    /** The device's memory in all, as the driver reports it. */
    public long deviceMemory() {
        return deviceTotal;
    }

    /**
     * Marks the pool unusable after a sticky CUDA error: later allocations fail with the error's
     * name, and its memory is never reused.
     *
     * @param error the error's name, e.g. {@code CUDA_ERROR_ILLEGAL_ADDRESS}
     */
    public void poison(String error) {
        poisoned = error;
    }

    /** The sticky error that poisoned the pool, if any. */
    public @Nullable String poisonedBy() {
        return poisoned;
    }

    /**
     * Waits for pending blocks and returns every arena to the driver (a poisoned pool's arenas go
     * with their context instead). Buffers still allocated become invalid.
     */
    @Override
    public void close() {
        synchronized (growLock) {
            if (closed) {
                return;
            }
            closed = true;
            if (poisoned == null) {
                api.makeCurrent(device);
                drainCache();
                for (Pending p; (p = pending.poll()) != null; ) {
                    api.synchronize(p.event());
                    events.recycle(p.event());
                    p.buffer().returned();
                }
                for (Arena a : arenas) {
                    api.free(a.base());
                }
                events.close();
            }
            for (Pending p; (p = pending.poll()) != null; ) {
                p.buffer().returned();
            }
            pendingBytes.set(0);
            taken.set(0);
            arenas.clear();
            reserved.set(0);
        }
    }

    @Override
    public String toString() {
        return "DeviceMemoryPool[cuda:" + device + ", " + statistics() + "]";
    }
}
