package io.hts.gpu.memory;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A binary buddy allocator over an abstract address range {@code [0, capacity)}: it hands out
 * offsets, never touches memory, and so serves device memory (an arena from {@code cuMemAlloc}),
 * pinned host memory or anything else addressed by offset. Pure Java, no CUDA.
 */
public final class BuddyAllocator {

    /*
     * Implementation overview.
     *
     * Orders. The range is {@code minBlock << maxOrder} bytes, both powers of two. A block
     * of order {@code k} is {@code minBlock << k} bytes and starts at a multiple of its size; its
     * <em>buddy</em> is the other half of the order {@code k + 1} block it was split from, at index
     * {@code i ^ 1}. A request is rounded up to the smallest order that holds it (internal
     * fragmentation, reported in {@link MemoryStatistics}).
     *
     * Free lists. Each order has a {@link FreeBitmap} of its free blocks (one bit per block,
     * with summary words above), so "take the lowest free block of order k", "is the buddy free" and
     * "remove the buddy" are each O(log<sub>64</sub> n), and an allocation or free visits at most
     * {@code maxOrder} orders: O(log n) overall, with no allocation per operation beyond the
     * returned {@link MemoryBlock}. Each order also has a bitmap of its allocated blocks, which
     * makes a double or foreign free an immediate error instead of a corrupted arena.
     *
     * Allocation of order {@code k} takes the lowest free block of the first order
     * {@code j >= k} that has one, then splits it down: at each order between {@code j} and {@code k}
     * the upper half goes onto that order's free list and the lower half is split further.
     *
     * Free coalesces upwards: while the block's buddy is free, remove the buddy and continue
     * with the merged block one order up; put the final block on its order's free list. A fully
     * freed allocator is therefore one block of {@code maxOrder} again.
     *
     * Locking. Each order has its own lock, and a thread holds at most one at a time (so
     * there is no lock order and no deadlock): the membership of order {@code k}'s bitmaps changes
     * only under order {@code k}'s lock, which makes "buddy is free, take it" atomic. Two threads
     * freeing both halves of a pair meet under that order's lock, and the second merges. Between two
     * orders a block being split or merged is in no list ("in transit"); an allocation that finds
     * nothing while another thread has memory in transit retries instead of failing spuriously:
     * {@code inTransit} is incremented, under the lock of the list a block leaves, before it leaves,
     * and decremented after it has landed; {@code landings} counts blocks that landed. A failed
     * allocation retries when either shows movement since it started, so it fails only when
     * every order was empty while nothing was moving (and retries only while others make progress).
     * Threads allocating small blocks contend only on the small orders' locks; a large allocation
     * does not stall them. Counters are atomics, read without locks for statistics (a snapshot, not a
     * linearizable picture).
     */

    private final long capacity;
    private final long minBlock;
    private final int minShift;
    private final int maxOrder;
    private final Level[] levels;
    private final AtomicInteger inTransit = new AtomicInteger();
    private final AtomicLong landings = new AtomicLong();
    private final AtomicLong used = new AtomicLong();
    private final AtomicLong requested = new AtomicLong();
    private final AtomicLong highWater = new AtomicLong();
    private final AtomicLong live = new AtomicLong();
    private final LongAdder allocations = new LongAdder();
    private final LongAdder failures = new LongAdder();

    /** One order's free and allocated blocks, guarded by the level itself. */
    private static final class Level {
        final FreeBitmap free;
        final long[] allocated;

        Level(int blocks) {
            free = new FreeBitmap(blocks);
            allocated = new long[(blocks + 63) >>> 6];
        }
    }

    /**
     * Creates an allocator whose whole range is one free block.
     *
     * @param capacity the range's size in bytes: a power of two, at least {@code minBlock}
     * @param minBlock the smallest block in bytes: a power of two (256 suits CUDA, whose
     *     allocations are 256-byte aligned)
     * @throws IllegalArgumentException when either is not a power of two, or there would be more
     *     than 2^30 minimum blocks
     */
    public BuddyAllocator(long capacity, long minBlock) {
        if (minBlock <= 0 || Long.bitCount(minBlock) != 1) {
            throw new IllegalArgumentException("the minimum block must be a power of two, was " + minBlock);
        }
        if (capacity < minBlock || Long.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("the capacity must be a power of two of at least the minimum block ("
                    + minBlock + "), was " + capacity);
        }
        long blocks = capacity / minBlock;
        if (blocks > 1L << 30) {
            throw new IllegalArgumentException("capacity " + capacity + " / minimum block " + minBlock + " = " + blocks
                    + " blocks; at most 2^30 are supported (raise the minimum block)");
        }
        this.capacity = capacity;
        this.minBlock = minBlock;
        this.minShift = Long.numberOfTrailingZeros(minBlock);
        this.maxOrder = Long.numberOfTrailingZeros(blocks);
        this.levels = new Level[maxOrder + 1];
        for (int k = 0; k <= maxOrder; k++) {
            levels[k] = new Level((int) (blocks >>> k));
        }
        levels[maxOrder].free.set(0);
    }

    /** The size of the range in bytes. */
    public long capacity() {
        return capacity;
    }

    /** The order of the whole range: log2(capacity / minBlock). */
    public int maxOrder() {
        return maxOrder;
    }

    /**
     * The order a request of {@code bytes} is rounded up to.
     *
     * @param bytes at least 1
     * @return the order; greater than {@link #maxOrder()} when the request cannot fit at all
     */
    public int orderFor(long bytes) {
        return orderFor(bytes, minBlock);
    }

    /**
     * The order a request of {@code bytes} is rounded up to in any buddy allocator with this
     * minimum block (a pool's arenas share it).
     *
     * @param bytes at least 1
     * @param minBlock a power of two
     * @return log2 of the number of minimum blocks in the smallest power-of-two block that holds it
     */
    public static int orderFor(long bytes, long minBlock) {
        if (bytes <= minBlock) {
            return 0;
        }
        return 64 - Long.numberOfLeadingZeros((bytes - 1) >>> Long.numberOfTrailingZeros(minBlock));
    }

    /**
     * Allocates a block of at least {@code bytes}.
     *
     * @param bytes at least 1
     * @return the block
     * @throws MemoryExhaustedException when no free block is large enough (the exception carries
     *     the statistics: free bytes and the largest free block tell exhaustion from fragmentation)
     */
    public MemoryBlock allocate(long bytes) {
        MemoryBlock b = tryAllocate(bytes);
        if (b == null) {
            MemoryStatistics s = statistics();
            throw new MemoryExhaustedException(
                    "cannot allocate " + MemoryStatistics.bytes(bytes) + " (a block of "
                            + MemoryStatistics.bytes(blockSize(bytes)) + ")",
                    bytes,
                    s);
        }
        return b;
    }

    /**
     * Allocates a block of at least {@code bytes}, or returns {@code null} when none is free.
     *
     * @param bytes at least 1
     * @return the block, or {@code null}
     */
    public @Nullable MemoryBlock tryAllocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("an allocation needs at least 1 byte, asked for " + bytes);
        }
        int k = orderFor(bytes);
        if (k > maxOrder) {
            failures.increment();
            return null;
        }
        while (true) {
            long landed = landings.get();
            for (int j = k; j <= maxOrder; j++) {
                Level level = levels[j];
                int index;
                synchronized (level) {
                    index = level.free.lowest();
                    if (index < 0) {
                        continue;
                    }
                    level.free.clear(index);
                    if (j == k) {
                        markAllocated(level, index);
                        return allocated(bytes, k, index);
                    }
                    inTransit.incrementAndGet(); // taken from order j, not yet split down to k
                }
                try {
                    for (int m = j - 1; m >= k; m--) {
                        index <<= 1;
                        Level lower = levels[m];
                        synchronized (lower) {
                            lower.free.set(index | 1);
                            if (m == k) {
                                markAllocated(lower, index);
                            }
                        }
                    }
                } finally {
                    landings.incrementAndGet();
                    inTransit.decrementAndGet();
                }
                return allocated(bytes, k, index);
            }
            if (inTransit.get() == 0 && landings.get() == landed) {
                failures.increment();
                return null;
            }
            Thread.onSpinWait(); // another thread is moving a block between orders: look again
        }
    }

    private MemoryBlock allocated(long bytes, int order, int index) {
        long size = minBlock << order;
        long u = used.addAndGet(size);
        requested.addAndGet(bytes);
        live.incrementAndGet();
        allocations.increment();
        long h;
        while (u > (h = highWater.get()) && !highWater.compareAndSet(h, u)) {
            Thread.onSpinWait();
        }
        return new MemoryBlock(this, (long) index << (minShift + order), size, bytes, order);
    }

    private static void markAllocated(Level level, int i) {
        level.allocated[i >>> 6] |= 1L << i;
    }

    /**
     * Returns a block, merging it with its free buddies.
     *
     * @param block a block of this allocator, not yet freed
     * @throws IllegalArgumentException when the block belongs to another allocator
     * @throws IllegalStateException when the block was already freed
     */
    public void free(MemoryBlock block) {
        if (block.allocator() != this) {
            throw new IllegalArgumentException(block + " belongs to another allocator");
        }
        int k = block.order();
        int index = (int) (block.offset() >>> (minShift + k));
        Level own = levels[k];
        synchronized (own) {
            long bit = 1L << index;
            if ((own.allocated[index >>> 6] & bit) == 0) {
                throw new IllegalStateException(block + " is not allocated (freed twice?)");
            }
            own.allocated[index >>> 6] &= ~bit;
        }
        used.addAndGet(-block.size());
        requested.addAndGet(-block.requested());
        live.decrementAndGet();
        boolean moving = false;
        try {
            for (int m = k; ; m++) {
                Level level = levels[m];
                synchronized (level) {
                    int buddy = index ^ 1;
                    if (m == maxOrder || !level.free.get(buddy)) {
                        level.free.set(index);
                        return;
                    }
                    level.free.clear(buddy);
                    if (!moving) {
                        inTransit.incrementAndGet(); // the merged block is in no list until it lands
                        moving = true;
                    }
                }
                index >>>= 1;
            }
        } finally {
            landings.incrementAndGet();
            if (moving) {
                inTransit.decrementAndGet();
            }
        }
    }

    /** The size of the block a request of {@code bytes} gets. */
    public long blockSize(long bytes) {
        int k = orderFor(Math.max(1, bytes));
        return k >= 63 - minShift ? Long.MAX_VALUE : minBlock << k;
    }

    /** The largest block that can be allocated now, 0 when none. */
    public long largestFreeBlock() {
        for (int k = maxOrder; k >= 0; k--) {
            Level level = levels[k];
            synchronized (level) {
                if (!level.free.isEmpty()) {
                    return minBlock << k;
                }
            }
        }
        return 0;
    }

    /** A snapshot of the allocator's state. */
    public MemoryStatistics statistics() {
        return new MemoryStatistics(
                capacity,
                capacity,
                used.get(),
                requested.get(),
                0,
                0,
                largestFreeBlock(),
                highWater.get(),
                live.get(),
                allocations.sum(),
                failures.sum(),
                1);
    }

    /** Whether nothing is allocated and the whole range is one free block again. */
    public boolean isFullyFree() {
        Level top = levels[maxOrder];
        synchronized (top) {
            return top.free.get(0);
        }
    }

    /** Counts a refusal made by an owner on this allocator's behalf (a pool that could not grow). */
    void countFailure() {
        failures.increment();
    }

    @Override
    public String toString() {
        return "BuddyAllocator[" + MemoryStatistics.bytes(capacity) + " in blocks of "
                + MemoryStatistics.bytes(minBlock) + " and up]";
    }
}
