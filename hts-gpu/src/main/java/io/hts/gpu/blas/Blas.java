package io.hts.gpu.blas;

import io.hts.gpu.memory.DeviceBuffer;

/**
 * cuBLAS operations on one stream (a GPU task's). Matrices are column-major, as cuBLAS expects.
 */
public interface Blas {

    /** The element and compute types of a GEMM. */
    enum Precision {
        /** FP32 in and out, FP32 arithmetic ({@code cublasSgemm}, default math). */
        FP32(4),
        /** FP32 in and out, TF32 tensor-core arithmetic ({@code cublasSgemm} in {@code CUBLAS_TF32_TENSOR_OP_MATH}). */
        TF32(4),
        /** BF16 in and out, FP32 accumulation ({@code cublasSgemmEx}, tensor cores). */
        BF16(2),
        /** FP16 in and out, FP32 accumulation ({@code cublasSgemmEx}, tensor cores). */
        FP16(2);

        private final int elementBytes;

        Precision(int elementBytes) {
            this.elementBytes = elementBytes;
        }

        /** Bytes per matrix element. */
        public int elementBytes() {
            return elementBytes;
        }
    }

    /**
     * {@code C = alpha * A * B + beta * C} with A m x k, B k x n, C m x n, no transposes.
     *
     * @param precision element and compute types
     * @param m rows of A and C
     * @param n columns of B and C
     * @param k columns of A, rows of B
     * @param alpha the product's factor
     * @param a A, leading dimension m
     * @param b B, leading dimension k
     * @param beta C's factor
     * @param c C, leading dimension m
     */
    void gemm(
            Precision precision,
            int m,
            int n,
            int k,
            float alpha,
            DeviceBuffer a,
            DeviceBuffer b,
            float beta,
            DeviceBuffer c);

    /**
     * The floating-point operations of a GEMM: 2mnk.
     *
     * @param m rows
     * @param n columns
     * @param k inner dimension
     * @return the operation count
     */
    static double gemmFlops(long m, long n, long k) {
        return 2.0 * m * n * k;
    }
}
