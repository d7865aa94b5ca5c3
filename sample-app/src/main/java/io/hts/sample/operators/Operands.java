package io.hts.sample.operators;

import java.util.SplittableRandom;

/**
 * The benchmark's data: square matrices and vectors of values in [-0.5, 0.5), the same for a seed
 * on every run, and the checks of results against direct computations in double precision.
 */
public final class Operands {

    /** How many entries of a result a check compares. */
    public static final int SAMPLES = 64;

    private Operands() {}

    /**
     * A GEMM's operands: A and B of size {@code n}, and C for the CPU's tiles to write.
     *
     * @param n the size
     * @param a A, column-major
     * @param b B, column-major
     * @param c C, column-major (zeros until computed)
     */
    public record Matrices(int n, float[] a, float[] b, float[] c) {

        /** A and B for size {@code n}, seeded by the size. */
        public static Matrices of(int n) {
            return new Matrices(n, values(n * n, 2L * n), values(n * n, 2L * n + 1), new float[n * n]);
        }
    }

    /**
     * AXPY's vectors.
     *
     * @param x x
     * @param y0 y before
     * @param y y, updated in place
     */
    public record Vectors(float[] x, float[] y0, float[] y) {

        /** x and y of {@code length}. */
        public static Vectors of(int length) {
            float[] y0 = values(length, 2);
            return new Vectors(values(length, 1), y0, y0.clone());
        }
    }

    /** {@code length} values in [-0.5, 0.5). */
    public static float[] values(int length, long seed) {
        float[] v = new float[length];
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < length; i++) {
            v[i] = (float) (random.nextDouble() - 0.5);
        }
        return v;
    }

    /**
     * Compares {@link #SAMPLES} entries of a column-major {@code C = A B} with their dot products
     * computed directly.
     *
     * @param what the operator, for the message
     * @param n the size
     * @param a A
     * @param b B
     * @param c the C to check
     * @return the largest error as a fraction of its tolerance (1e-5 of the sum of |terms|)
     * @throws IllegalStateException when an entry is off by more than its tolerance
     */
    public static double checkGemm(String what, int n, float[] a, float[] b, float[] c) {
        SplittableRandom random = new SplittableRandom(n);
        double worst = 0;
        for (int s = 0; s < SAMPLES; s++) {
            int i = random.nextInt(n);
            int j = random.nextInt(n);
            double dot = 0;
            double magnitude = 0;
            for (int k = 0; k < n; k++) {
                double term = (double) a[i + k * n] * b[k + j * n];
                dot += term;
                magnitude += Math.abs(term);
            }
            double error = Math.abs(c[i + j * n] - dot) / (1e-5 * magnitude + 1e-30);
            if (!(error <= 1)) {
                throw new IllegalStateException(String.format(
                        java.util.Locale.ROOT,
                        "%s: C[%d, %d] is %s, the direct dot product %s",
                        what,
                        i,
                        j,
                        c[i + j * n],
                        dot));
            }
            worst = Math.max(worst, error);
        }
        return worst;
    }

    /**
     * Compares {@link #SAMPLES} entries of {@code y} after {@code repetitions} AXPYs
     * ({@code y += alpha x}) with {@code y0 + repetitions alpha x} in double precision. The
     * tolerance is float rounding at its worst: one unit of the last place of the running magnitude
     * per addition.
     *
     * @return the largest error as a fraction of its tolerance
     * @throws IllegalStateException when an entry is off by more
     */
    public static double checkAxpy(String what, float alpha, int repetitions, float[] x, float[] y0, float[] y) {
        SplittableRandom random = new SplittableRandom(x.length);
        double worst = 0;
        for (int s = 0; s < SAMPLES; s++) {
            int i = random.nextInt(x.length);
            double expected = y0[i] + (double) repetitions * alpha * x[i];
            double magnitude = Math.abs(y0[i]) + (double) repetitions * Math.abs(alpha * x[i]);
            double error = Math.abs(y[i] - expected) / (1.2e-7 * (repetitions + 1) * magnitude + 1e-6);
            if (!(error <= 1)) {
                throw new IllegalStateException(
                        String.format(java.util.Locale.ROOT, "%s: y[%d] is %s, expected %s", what, i, y[i], expected));
            }
            worst = Math.max(worst, error);
        }
        return worst;
    }
}
