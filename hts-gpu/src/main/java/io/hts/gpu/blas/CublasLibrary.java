package io.hts.gpu.blas;

import io.hts.gpu.cuda.JCudaApi;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.stream.StreamLease;
import jcuda.Pointer;
import jcuda.cudaDataType;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasMath;
import jcuda.jcublas.cublasOperation;
import jcuda.jcublas.cublasStatus;
import jcuda.runtime.cudaStream_t;
import org.jspecify.annotations.Nullable;

/**
 * cuBLAS for one device, through JCublas2: one handle per stream lane, created on first use and
 * bound to that lane's stream, so GEMMs of concurrent tasks run on their own streams. JCuda 12.6.0
 * links {@code libcublas.so.12}; where only CUDA 13 is installed {@link #load} fails with a
 * message naming the missing library and the fix ({@code hts-gpu/scripts/jcuda-cuda13.sh},
 * docs/gpu.md), and the GPU backend runs everything else without it.
 */
public final class CublasLibrary implements AutoCloseable {

    private final @Nullable cublasHandle[] handles;

    private CublasLibrary(int lanes) {
        this.handles = new cublasHandle[lanes];
    }

    /**
     * Loads cuBLAS.
     *
     * @param lanes the device's stream count
     * @return the library
     * @throws IllegalStateException when cuBLAS cannot be loaded, saying why and how to fix it
     */
    public static CublasLibrary load(int lanes) {
        try {
            JCublas2.setExceptionsEnabled(false);
            int[] version = new int[1];
            cublasHandle probe = new cublasHandle();
            check("cublasCreate", JCublas2.cublasCreate(probe));
            JCublas2.cublasGetVersion(probe, version);
            JCublas2.cublasDestroy(probe);
        } catch (LinkageError ex) {
            throw new IllegalStateException(
                    "cuBLAS could not be loaded (" + ex.getMessage() + "). JCuda 12.6.0 needs"
                            + " libcublas.so.12; on a CUDA 13 machine retarget its natives to libcublas.so.13 with"
                            + " hts-gpu/scripts/jcuda-cuda13.sh (docs/gpu.md). GPU tasks that do not use cuBLAS still run",
                    ex);
        }
        return new CublasLibrary(lanes);
    }

    static void check(String call, int status) {
        if (status != cublasStatus.CUBLAS_STATUS_SUCCESS) {
            throw new IllegalStateException(call + " failed: " + cublasStatus.stringFor(status));
        }
    }

    /**
     * cuBLAS on a lane's stream. Must be called on the device's launcher thread.
     *
     * @param lease the lane
     * @return operations on that stream
     */
    public Blas on(StreamLease lease) {
        cublasHandle h = handles[lease.lane()];
        if (h == null) {
            h = new cublasHandle();
            check("cublasCreate", JCublas2.cublasCreate(h));
            check("cublasSetStream", JCublas2.cublasSetStream(h, new cudaStream_t(JCudaApi.handle(lease.stream()))));
            handles[lease.lane()] = h;
        }
        return new StreamBlas(h);
    }

    private record StreamBlas(cublasHandle handle) implements Blas {

        @Override
        public void gemm(
                Precision precision,
                int m,
                int n,
                int k,
                float alpha,
                DeviceBuffer a,
                DeviceBuffer b,
                float beta,
                DeviceBuffer c) {
            long e = precision.elementBytes();
            require(a, (long) m * k * e, "A");
            require(b, (long) k * n * e, "B");
            require(c, (long) m * n * e, "C");
            Pointer pa = Pointer.to(new float[] {alpha});
            Pointer pb = Pointer.to(new float[] {beta});
            int op = cublasOperation.CUBLAS_OP_N;
            switch (precision) {
                case FP32, TF32 -> {
                    check(
                            "cublasSetMathMode",
                            JCublas2.cublasSetMathMode(
                                    handle,
                                    precision == Precision.TF32
                                            ? cublasMath.CUBLAS_TF32_TENSOR_OP_MATH
                                            : cublasMath.CUBLAS_DEFAULT_MATH));
                    check(
                            "cublasSgemm",
                            JCublas2.cublasSgemm(
                                    handle,
                                    op,
                                    op,
                                    m,
                                    n,
                                    k,
                                    pa,
                                    JCudaApi.pointer(a.address()),
                                    m,
                                    JCudaApi.pointer(b.address()),
                                    k,
                                    pb,
                                    JCudaApi.pointer(c.address()),
                                    m));
                }
                case BF16 -> gemm16(op, m, n, k, pa, a, b, pb, c, cudaDataType.CUDA_R_16BF);
                case FP16 -> gemm16(op, m, n, k, pa, a, b, pb, c, cudaDataType.CUDA_R_16F);
            }
        }

        /**
         * 16-bit inputs and output with FP32 accumulation on tensor cores, through
         * {@code cublasSgemmEx} (JCuda 12.6.0's {@code cublasGemmEx} is refused by cuBLAS 13 with
         * NOT_SUPPORTED for every type, measured on the H200; {@code cublasSgemmEx} has no
         * compute-type argument and works).
         */
        private void gemm16(
                int op,
                int m,
                int n,
                int k,
                Pointer alpha,
                DeviceBuffer a,
                DeviceBuffer b,
                Pointer beta,
                DeviceBuffer c,
                int type) {
            check("cublasSetMathMode", JCublas2.cublasSetMathMode(handle, cublasMath.CUBLAS_DEFAULT_MATH));
            check(
                    "cublasSgemmEx",
                    JCublas2.cublasSgemmEx(
                            handle,
                            op,
                            op,
                            m,
                            n,
                            k,
                            alpha,
                            JCudaApi.pointer(a.address()),
                            type,
                            m,
                            JCudaApi.pointer(b.address()),
                            type,
                            k,
                            beta,
                            JCudaApi.pointer(c.address()),
                            type,
                            m));
        }

        private static void require(DeviceBuffer buffer, long bytes, String name) {
            if (buffer.bytes() < bytes) {
                throw new IllegalArgumentException(
                        "GEMM matrix " + name + " needs " + bytes + " bytes; " + buffer + " holds " + buffer.bytes());
            }
        }
    }

    /** Destroys the handles. */
    @Override
    public void close() {
        for (int i = 0; i < handles.length; i++) {
            cublasHandle h = handles[i];
            if (h != null) {
                JCublas2.cublasDestroy(h);
                handles[i] = null;
            }
        }
    }
}
