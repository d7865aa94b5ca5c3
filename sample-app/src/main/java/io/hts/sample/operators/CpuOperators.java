package io.hts.sample.operators;

import dev.ludovic.netlib.blas.BLAS;

/**
 * The CPU bodies: a tile of a GEMM and a band of an AXPY, each through the JVM BLAS
 * ({@code dev.ludovic.netlib:blas}: the system's BLAS through JNI where one is installed, otherwise
 * Java on the Vector API when the JVM has {@code jdk.incubator.vector}, otherwise plain Java). The
 * library's GEMM is single-threaded and slows down on large operands, so a GEMM is cut into square
 * tiles of C, each a task that adds up blocks of at most {@value #BLOCK} along the inner dimension.
 */
public final class CpuOperators {

    /** The largest tile and inner block. */
    public static final int BLOCK = 512;

    private CpuOperators() {}

    /** Which BLAS implementation the JVM got, e.g. {@code VectorBLAS}. */
    public static String blasName() {
        return BLAS.getInstance().getClass().getSimpleName();
    }

    /**
     * The tile edge for a GEMM of size {@code n} on {@code workers} workers: at least two tiles a
     * worker where the size allows, no tile under 64 or over {@value #BLOCK}.
     */
    public static int tileSize(int n, int workers) {
        int perSide = (int) Math.ceil(Math.sqrt(2.0 * workers));
        return Math.max(Math.min(64, n), Math.min(BLOCK, Math.max(1, n / perSide)));
    }

    /** How many tiles a side of an {@code n x n} C has. */
    public static int tilesPerSide(int n, int tile) {
        return (n + tile - 1) / tile;
    }

    /**
     * Computes tile {@code t} of the column-major {@code C = A B}, {@code repetitions} times.
     *
     * @param n the size
     * @param tile the tile edge
     * @param t the tile's index (column of tiles times tiles per side plus row of tiles)
     * @param repetitions how many times
     * @param a A
     * @param b B
     * @param c C (tiles are disjoint: tasks write them at once)
     * @return when the repetitions started and ended
     */
    public static Stamp gemmTile(int n, int tile, int t, int repetitions, float[] a, float[] b, float[] c) {
        BLAS blas = BLAS.getInstance();
        int side = tilesPerSide(n, tile);
        int i0 = (t % side) * tile;
        int j0 = (t / side) * tile;
        int rows = Math.min(tile, n - i0);
        int cols = Math.min(tile, n - j0);
        long start = System.nanoTime();
        for (int r = 0; r < repetitions; r++) {
            for (int p0 = 0; p0 < n; p0 += BLOCK) {
                int depth = Math.min(BLOCK, n - p0);
                blas.sgemm(
                        "N",
                        "N",
                        rows,
                        cols,
                        depth,
                        1f,
                        a,
                        i0 + p0 * n,
                        n,
                        b,
                        p0 + j0 * n,
                        n,
                        p0 == 0 ? 0f : 1f,
                        c,
                        i0 + j0 * n,
                        n);
            }
        }
        return new Stamp(start, System.nanoTime());
    }

    /**
     * {@code y += alpha x} over band {@code band} of {@code bands}, {@code repetitions} times.
     *
     * @return when the repetitions started and ended
     */
    public static Stamp axpyBand(int band, int bands, int repetitions, float alpha, float[] x, float[] y) {
        BLAS blas = BLAS.getInstance();
        int from = (int) ((long) x.length * band / bands);
        int to = (int) ((long) x.length * (band + 1) / bands);
        long start = System.nanoTime();
        for (int r = 0; r < repetitions; r++) {
            blas.saxpy(to - from, alpha, x, from, 1, y, from, 1);
        }
        return new Stamp(start, System.nanoTime());
    }
}
