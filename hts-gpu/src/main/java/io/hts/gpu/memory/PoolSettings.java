package io.hts.gpu.memory;

/**
 * Sizes and limits of a {@link DeviceMemoryPool}.
 *
 * @param initialBytes reserved when the pool is created, rounded down to a multiple of the minimum block
 *     (0 reserves on first use)
 * @param maximumBytes the most the pool may reserve from the driver
 * @param arenaBytes the size of each arena added as the pool grows: a power of two (a larger
 *     request gets an arena of its own, rounded up to a power of two)
 * @param minimumBlock the smallest block: a power of two, at least 256 (CUDA's alignment)
 */
public record PoolSettings(long initialBytes, long maximumBytes, long arenaBytes, long minimumBlock) {

    /** The default arena: 256 MiB. */
    public static final long DEFAULT_ARENA = 256L << 20;

    /** The default minimum block: 256 B. */
    public static final long DEFAULT_MINIMUM_BLOCK = 256;

    /** Validates the settings, naming the property and what is accepted. */
    public PoolSettings {
        if (minimumBlock < 256 || Long.bitCount(minimumBlock) != 1) {
            throw new IllegalArgumentException("hts.gpu.memory-pool.minimum-block must be a power of two of at least"
                    + " 256 bytes, was " + minimumBlock);
        }
        if (arenaBytes < minimumBlock || Long.bitCount(arenaBytes) != 1) {
            throw new IllegalArgumentException("hts.gpu.memory-pool.arena-size must be a power of two of at least the"
                    + " minimum block (" + minimumBlock + " bytes), was " + arenaBytes);
        }
        if (initialBytes < 0) {
            throw new IllegalArgumentException("hts.gpu.memory-pool.initial must be 0 or more, was " + initialBytes);
        }
        if (maximumBytes < initialBytes || maximumBytes < minimumBlock) {
            throw new IllegalArgumentException("hts.gpu.memory-pool.maximum (" + maximumBytes
                    + ") must be at least hts.gpu.memory-pool.initial (" + initialBytes + ") and the minimum block ("
                    + minimumBlock + ")");
        }
    }

    /**
     * Settings with the default arena and minimum block.
     *
     * @param initialBytes reserved at creation
     * @param maximumBytes the limit
     * @return the settings
     */
    public static PoolSettings of(long initialBytes, long maximumBytes) {
        return new PoolSettings(initialBytes, maximumBytes, DEFAULT_ARENA, DEFAULT_MINIMUM_BLOCK);
    }
}
