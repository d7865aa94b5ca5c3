package io.hts.gpu.memory;

import java.util.Locale;

/**
 * A snapshot of an allocator's or a memory pool's state. Taken without stopping allocation: under
 * concurrent use the fields are each current but not one atomic picture.
 *
 * @param capacity bytes managed now (the arenas reserved so far)
 * @param limit the most bytes it may manage (equal to {@code capacity} for one allocator)
 * @param used bytes in allocated blocks
 * @param requested bytes asked for by the allocated blocks' owners
 * @param pendingFree bytes freed but not yet reusable (their stream's work has not completed)
 * @param cachedFree bytes free and kept by size for immediate reuse (part of {@link #free()})
 * @param largestFreeBlock the largest block that can be allocated now without growing
 * @param highWaterMark the most bytes ever in allocated blocks at once (for a pool: taken from its
 *     arenas, blocks kept in its cache included)
 * @param liveBlocks blocks allocated and not yet freed
 * @param allocations successful allocations so far
 * @param failures allocations refused for lack of memory
 * @param arenas the number of arenas (address ranges) managed
 */
public record MemoryStatistics(
        long capacity,
        long limit,
        long used,
        long requested,
        long pendingFree,
        long cachedFree,
        long largestFreeBlock,
        long highWaterMark,
        long liveBlocks,
        long allocations,
        long failures,
        int arenas) {

    /** Bytes that can be allocated now, in any block sizes, without growing. */
    public long free() {
        return capacity - used - pendingFree;
    }

    /**
     * Internal fragmentation: the share of allocated bytes nobody asked for (blocks are rounded up
     * to a power of two), from 0 to 1.
     */
    public double internalFragmentation() {
        return used == 0 ? 0 : (double) (used - requested) / used;
    }

    /**
     * External fragmentation: 1 - largest free block / free bytes, from 0 (all free memory is one
     * block) towards 1 (free memory is scattered in small blocks).
     */
    public double externalFragmentation() {
        long free = free();
        return free <= 0 ? 0 : 1 - (double) largestFreeBlock / free;
    }

    /**
     * Sums snapshots of several arenas (a pool's), with the pool's limit, pending bytes and cached
     * blocks ({bytes, largest, count, requested}: free to the pool though allocated in the arenas).
     */
    static MemoryStatistics combine(
            Iterable<MemoryStatistics> parts,
            long limit,
            long pendingFree,
            long[] cached,
            long highWaterMark,
            long failures) {
        long cachedFree = cached[0];
        long capacity = 0;
        long used = 0;
        long requested = 0;
        long largest = cached[1];
        long live = 0;
        long allocations = 0;
        int arenas = 0;
        for (MemoryStatistics s : parts) {
            capacity += s.capacity;
            used += s.used;
            requested += s.requested;
            largest = Math.max(largest, s.largestFreeBlock);
            live += s.liveBlocks;
            allocations += s.allocations;
            arenas += s.arenas;
        }
        return new MemoryStatistics(
                capacity,
                limit,
                used - pendingFree - cachedFree,
                requested - cached[3],
                pendingFree,
                cachedFree,
                largest,
                highWaterMark,
                live - cached[2],
                allocations,
                failures,
                arenas);
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "used %s of %s (limit %s, %d arenas), pending free %s, cached free %s,"
                        + " largest free block %s, high water %s, %d live blocks, %d allocations, %d failures, fragmentation"
                        + " internal %.1f%% external %.1f%%",
                bytes(used),
                bytes(capacity),
                bytes(limit),
                arenas,
                bytes(pendingFree),
                bytes(cachedFree),
                bytes(largestFreeBlock),
                bytes(highWaterMark),
                liveBlocks,
                allocations,
                failures,
                100 * internalFragmentation(),
                100 * externalFragmentation());
    }

    /** Bytes in the largest binary unit that keeps the number at least 1 (B, KiB, MiB, GiB, TiB). */
    public static String bytes(long n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = 0;
        while (Math.abs(v) >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
