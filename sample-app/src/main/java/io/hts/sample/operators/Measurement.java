package io.hts.sample.operators;

import org.jspecify.annotations.Nullable;

/**
 * One cell of the benchmark's table: an operator at a size on a device, checked.
 *
 * @param operator {@code GEMM} or {@code AXPY}
 * @param size the matrix edge, or the vector length
 * @param device {@code CPU} or {@code GPU}
 * @param rate GFLOP/s for GEMM, GB/s for AXPY (reads and writes); NaN when not measured
 * @param repetitions how many operations the time covers
 * @param checkError the checked entries' largest error, as a fraction of its tolerance
 * @param unavailable why it was not measured, {@code null} when it was
 */
public record Measurement(
        String operator,
        long size,
        String device,
        double rate,
        int repetitions,
        double checkError,
        @Nullable String unavailable) {

    /** GFLOP/s for GEMM, GB/s for AXPY. */
    public String unit() {
        return operator.equals("GEMM") ? "GFLOP/s" : "GB/s";
    }

    /** A measured GEMM. */
    static Measurement gemm(String device, int n, int repetitions, long nanos, double checkError) {
        return new Measurement("GEMM", n, device, 2.0 * n * n * n * repetitions / nanos, repetitions, checkError, null);
    }

    /** A measured AXPY: two floats read and one written an element. */
    static Measurement axpy(String device, int length, int repetitions, long nanos, double checkError) {
        return new Measurement(
                "AXPY", length, device, 12.0 * length * repetitions / nanos, repetitions, checkError, null);
    }
}
