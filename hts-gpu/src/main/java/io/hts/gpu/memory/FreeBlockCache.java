package io.hts.gpu.memory;

import org.jspecify.annotations.Nullable;

/**
 * Free blocks kept by size class (buddy order) for immediate reuse, in front of the buddy
 * allocators of a {@link DeviceMemoryPool}: a GPU task that allocates the same scratch sizes on
 * every run then pays one short critical section, not a buddy split and coalesce of up to
 * {@code maxOrder} levels. The same idea as the size-binned caches of PyTorch's CUDA allocator.
 *
 * <p>Each order holds at most {@link #PER_ORDER} blocks, and only blocks up to
 * {@code maxCachedBytes} are cached (larger ones go back to their buddy at once, where they
 * coalesce). The pool {@linkplain #drainTo flushes} the cache into the buddies before it grows or
 * fails, so caching never causes an allocation to fail or the pool to grow. Thread-safe: one lock
 * per order.
 */
final class FreeBlockCache {

    /** Blocks cached per order. */
    static final int PER_ORDER = 64;

    private final long maxCachedBytes;
    private final Order[] orders;

    private static final class Order {
        final MemoryBlock[] blocks = new MemoryBlock[PER_ORDER];
        final long[] bases = new long[PER_ORDER];
        int size;
    }

    /** A cached block and the base address of its arena. */
    record Entry(MemoryBlock block, long arenaBase) {
    }

    FreeBlockCache(int maxOrder, long maxCachedBytes) {
        this.maxCachedBytes = maxCachedBytes;
        this.orders = new Order[maxOrder + 1];
        for (int i = 0; i <= maxOrder; i++) {
            orders[i] = new Order();
        }
    }

    /** Takes a cached block of {@code order}, or returns {@code null}. */
    @Nullable Entry take(int order) {
        if (order >= orders.length) {
            return null;
        }
        Order o = orders[order];
        synchronized (o) {
            if (o.size == 0) {
                return null;
            }
            int i = --o.size;
            MemoryBlock b = o.blocks[i];
            o.blocks[i] = null;
            return new Entry(b, o.bases[i]);
        }
    }

    /** Keeps a free block; false when it is too large or its order is full (free it to its buddy). */
    boolean offer(MemoryBlock block, long arenaBase) {
        if (block.size() > maxCachedBytes || block.order() >= orders.length) {
            return false;
        }
        Order o = orders[block.order()];
        synchronized (o) {
            if (o.size == PER_ORDER) {
                return false;
            }
            o.blocks[o.size] = block;
            o.bases[o.size] = arenaBase;
            o.size++;
            return true;
        }
    }

    /** Frees every cached block to its buddy; returns the bytes freed. */
    long drainTo() {
        long bytes = 0;
        for (Order o : orders) {
            synchronized (o) {
                for (int i = 0; i < o.size; i++) {
                    bytes += o.blocks[i].size();
                    o.blocks[i].allocator().free(o.blocks[i]);
                    o.blocks[i] = null;
                }
                o.size = 0;
            }
        }
        return bytes;
    }

    /** What the cache holds now: {bytes, largest block, blocks, bytes their last owners had asked for}. */
    long[] held() {
        long bytes = 0;
        long largest = 0;
        long blocks = 0;
        long requested = 0;
        for (Order o : orders) {
            synchronized (o) {
                for (int i = 0; i < o.size; i++) {
                    bytes += o.blocks[i].size();
                    largest = Math.max(largest, o.blocks[i].size());
                    requested += o.blocks[i].requested();
                }
                blocks += o.size;
            }
        }
        return new long[] {bytes, largest, blocks, requested};
    }
}
