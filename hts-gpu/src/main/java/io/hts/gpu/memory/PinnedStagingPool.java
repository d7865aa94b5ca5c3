package io.hts.gpu.memory;

import io.hts.gpu.cuda.CudaApi;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jspecify.annotations.Nullable;

/**
 * Page-locked host memory for asynchronous host-device copies: one pinned arena carved up by a
 * {@link BuddyAllocator} (the same allocator as device memory, over host offsets), so staging a
 * copy costs no {@code cuMemAllocHost} call. A request larger than the arena, or one that does not
 * fit while the arena is busy, gets pinned memory of its own, freed when it is released.
 * Pinned memory copies several times faster than pageable memory (docs/gpu.md has the measured
 * rates), and only pinned memory lets the copy overlap with the host.
 *
 * <p>Thread-safe. A staging buffer must be released only after the copy that uses it has
 * completed on the device (the GPU backend does so when the task's work completes).
 */
public final class PinnedStagingPool implements AutoCloseable {

    private final CudaApi api;
    private final ByteBuffer arena;
    private final BuddyAllocator allocator;
    private volatile boolean closed;

    /**
     * A staging buffer: {@link #buffer()} covers exactly the bytes asked for, position 0.
     *
     * @param buffer the host memory (native byte order)
     * @param block its block in the arena, or {@code null} when pinned on its own
     */
    public record Staging(ByteBuffer buffer, @Nullable MemoryBlock block) {}

    /**
     * Pins the arena.
     *
     * @param api the CUDA API (the caller's current context)
     * @param arenaBytes a power of two
     */
    public PinnedStagingPool(CudaApi api, long arenaBytes) {
        this.api = api;
        this.allocator = new BuddyAllocator(arenaBytes, 4096);
        this.arena = api.allocatePinned(arenaBytes);
    }

    /**
     * Staging memory of {@code bytes}.
     *
     * @param bytes at least 1
     * @return the staging buffer
     */
    public Staging acquire(long bytes) {
        if (closed) {
            throw new IllegalStateException("the pinned staging pool is closed");
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "a staging buffer holds at most 2 GiB, asked for " + bytes + " bytes; copy in parts");
        }
        MemoryBlock block = allocator.tryAllocate(bytes);
        if (block == null) {
            return new Staging(api.allocatePinned(bytes), null);
        }
        ByteBuffer view = arena.duplicate()
                .position((int) block.offset())
                .limit((int) (block.offset() + bytes))
                .slice()
                .order(ByteOrder.nativeOrder());
        return new Staging(view, block);
    }

    /**
     * Releases staging memory whose copies have completed.
     *
     * @param staging a buffer from {@link #acquire}
     */
    public void release(Staging staging) {
        MemoryBlock b = staging.block();
        if (b == null) {
            api.freePinned(staging.buffer());
        } else {
            allocator.free(b);
        }
    }

    /** The arena's statistics. */
    public MemoryStatistics statistics() {
        return allocator.statistics();
    }

    /** Unpins the arena. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            api.freePinned(arena);
        }
    }
}
