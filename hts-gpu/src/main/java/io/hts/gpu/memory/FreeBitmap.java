package io.hts.gpu.memory;

/**
 * A set of block indices with O(log<sub>64</sub> n) insert, remove and "lowest member": the free
 * list of one order of a {@link BuddyAllocator}.
 *
 * <p>Level 0 has one bit per block; each word of level {@code l + 1} has one bit per word of level
 * {@code l}, set while that word is non-zero. Finding the lowest free block walks from the single
 * top word down with {@link Long#numberOfTrailingZeros}, so the allocator hands out the lowest
 * free address of an order (address-ordered first fit, which keeps the top of the arena free for
 * large blocks). Not thread-safe: the allocator guards each bitmap with its order's lock.
 */
final class FreeBitmap {

    private final long[][] levels;

    FreeBitmap(int bits) {
        if (bits <= 0) {
            throw new IllegalArgumentException("a bitmap needs at least one bit, got " + bits);
        }
        int count = 1;
        for (long words = wordsFor(bits); words > 1; words = wordsFor(words)) {
            count++;
        }
        levels = new long[count][];
        long n = bits;
        for (int l = 0; l < count; l++) {
            levels[l] = new long[(int) wordsFor(n)];
            n = levels[l].length;
        }
    }

    private static long wordsFor(long bits) {
        return (bits + 63) >>> 6;
    }

    boolean get(int i) {
        return (levels[0][i >>> 6] & (1L << i)) != 0;
    }

    void set(int i) {
        int index = i;
        for (long[] level : levels) {
            int w = index >>> 6;
            long before = level[w];
            level[w] = before | (1L << index);
            if (before != 0) {
                return; // the levels above already know this word is non-empty
            }
            index = w;
        }
    }

    void clear(int i) {
        int index = i;
        for (long[] level : levels) {
            int w = index >>> 6;
            long after = level[w] & ~(1L << index);
            level[w] = after;
            if (after != 0) {
                return;
            }
            index = w;
        }
    }

    /** The lowest member, or -1 when empty. */
    int lowest() {
        int top = levels.length - 1;
        if (levels[top][0] == 0) {
            return -1;
        }
        int index = 0;
        for (int l = top; l >= 0; l--) {
            index = (index << 6) + Long.numberOfTrailingZeros(levels[l][index]);
        }
        return index;
    }

    boolean isEmpty() {
        return levels[levels.length - 1][0] == 0;
    }
}
