package io.hts.gpu.memory;

import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Free blocks kept by size class (buddy order) for immediate reuse, in front of the buddy
 * allocators of a {@link DeviceMemoryPool}: a GPU task that allocates the same scratch sizes on
 * every run then pays one short, usually uncontended critical section, not a buddy split and
 * coalesce of up to {@code maxOrder} levels. The same idea as the size-binned caches of PyTorch's
 * CUDA allocator.
 *
 * <p><b>Stripes.</b> The cache is striped by thread (a power of two of stripes, up to 16, from the
 * number of processors): a thread offers to and takes from its home stripe first, so threads
 * allocating the same size do not meet on one lock; a take that finds its home stripe empty looks
 * at the others (skipping empty ones by a racy read of their size, a hint only) before the pool
 * goes to the buddies.
 *
 * <p><b>Bounds.</b> Each stripe holds at most {@link #PER_STRIPE} blocks an order, only blocks up
 * to {@code maxCachedBytes} are cached, and all stripes together hold at most {@code budgetBytes}
 * (a {@link LongAdder}, read approximately). The pool {@linkplain #drainTo flushes} the cache into
 * the buddies before it grows or fails, so caching never makes an allocation fail or the pool grow.
 */
final class FreeBlockCache {

    /** Blocks cached per stripe and order. */
    static final int PER_STRIPE = 16;

    private final long maxCachedBytes;
    private final long budgetBytes;
    private final int stripeMask;
    private final int stripeShift;
    private final Order[][] orders;
    private final LongAdder held = new LongAdder();

    private static final class Order {
        final MemoryBlock[] blocks = new MemoryBlock[PER_STRIPE];
        final long[] bases = new long[PER_STRIPE];
        int size;
    }

    /** A cached block and the base address of its arena. */
    record Entry(MemoryBlock block, long arenaBase) {}

    FreeBlockCache(int maxOrder, long maxCachedBytes, long budgetBytes) {
        this.maxCachedBytes = maxCachedBytes;
        this.budgetBytes = budgetBytes;
        int stripes = 1;
        while (stripes < Math.min(16, Runtime.getRuntime().availableProcessors())) {
            stripes <<= 1;
        }
        this.stripeMask = stripes - 1;
        this.stripeShift = 32 - Integer.numberOfTrailingZeros(stripes);
        this.orders = new Order[stripes][maxOrder + 1];
        for (Order[] stripe : orders) {
            for (int i = 0; i <= maxOrder; i++) {
                stripe[i] = new Order();
            }
        }
    }

    private int homeStripe() {
        if (stripeMask == 0) {
            return 0;
        }
        @SuppressWarnings("deprecation") // Thread.threadId() is Java 19+
        int h = (int) Thread.currentThread().getId() * 0x9E3779B9;
        return h >>> stripeShift;
    }

    /** Takes a cached block of {@code order}, or returns {@code null}. */
    @Nullable
    Entry take(int order) {
        if (order >= orders[0].length) {
            return null;
        }
        int home = homeStripe();
        for (int k = 0; k <= stripeMask; k++) {
            Order o = orders[(home + k) & stripeMask][order];
            if (k > 0 && o.size == 0) {
                continue; // a racy read, a hint: an empty stripe is not worth its lock
            }
            synchronized (o) {
                if (o.size == 0) {
                    continue;
                }
                int i = --o.size;
                MemoryBlock b = o.blocks[i];
                o.blocks[i] = null;
                held.add(-b.size());
                return new Entry(b, o.bases[i]);
            }
        }
        return null;
    }

    /** Keeps a free block; false when it is too large, its stripe's order is full or the budget is spent. */
    boolean offer(MemoryBlock block, long arenaBase) {
        if (block.size() > maxCachedBytes
                || block.order() >= orders[0].length
                || held.sum() + block.size() > budgetBytes) {
            return false;
        }
        Order o = orders[homeStripe()][block.order()];
        synchronized (o) {
            if (o.size == PER_STRIPE) {
                return false;
            }
            o.blocks[o.size] = block;
            o.bases[o.size] = arenaBase;
            o.size++;
        }
        held.add(block.size());
        return true;
    }

    /** Frees every cached block to its buddy; returns the bytes freed. */
    long drainTo() {
        long bytes = 0;
        for (Order[] stripe : orders) {
            for (Order o : stripe) {
                synchronized (o) {
                    for (int i = 0; i < o.size; i++) {
                        bytes += o.blocks[i].size();
                        o.blocks[i].allocator().free(o.blocks[i]);
                        o.blocks[i] = null;
                    }
                    o.size = 0;
                }
            }
        }
        held.add(-bytes);
        return bytes;
    }

    /** The bytes the cache holds now, without walking it (a sum of a few counter cells). */
    long heldBytes() {
        return held.sum();
    }

    /** What the cache holds now: {bytes, largest block, blocks, bytes their last owners had asked for}. */
    long[] held() {
        long bytes = 0;
        long largest = 0;
        long blocks = 0;
        long requested = 0;
        for (Order[] stripe : orders) {
            for (Order o : stripe) {
                synchronized (o) {
                    for (int i = 0; i < o.size; i++) {
                        bytes += o.blocks[i].size();
                        largest = Math.max(largest, o.blocks[i].size());
                        requested += o.blocks[i].requested();
                    }
                    blocks += o.size;
                }
            }
        }
        return new long[] {bytes, largest, blocks, requested};
    }
}
