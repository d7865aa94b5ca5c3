package io.hts.gpu.cuda;

/**
 * A CUDA launch dimension.
 *
 * @param x at least 1
 * @param y at least 1
 * @param z at least 1
 */
public record Dim3(int x, int y, int z) {

    /** Validates the dimensions. */
    public Dim3 {
        if (x < 1 || y < 1 || z < 1) {
            throw new IllegalArgumentException(
                    "launch dimensions must be at least 1, were (" + x + ", " + y + ", " + z + ")");
        }
    }

    /**
     * A one-dimensional size.
     *
     * @param x at least 1
     * @return {@code (x, 1, 1)}
     */
    public static Dim3 of(int x) {
        return new Dim3(x, 1, 1);
    }

    /**
     * Enough blocks of {@code threads} threads to cover {@code n} elements, one thread each.
     *
     * @param n elements, at least 1
     * @param threads threads per block
     * @return {@code (ceil(n / threads), 1, 1)}
     */
    public static Dim3 blocksFor(long n, int threads) {
        long blocks = (n + threads - 1) / threads;
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(n + " elements need " + blocks + " blocks of " + threads
                    + " threads; at most " + Integer.MAX_VALUE + " fit in one grid dimension");
        }
        return of((int) Math.max(1, blocks));
    }
}
