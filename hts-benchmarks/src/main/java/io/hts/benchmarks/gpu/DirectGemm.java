package io.hts.benchmarks.gpu;

import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.JCudaApi;
import io.hts.gpu.memory.DeviceBuffer;
import jcuda.Pointer;
import jcuda.cudaDataType;
import jcuda.driver.CUdeviceptr;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasMath;
import jcuda.jcublas.cublasOperation;

/** The baseline of the GEMM benchmarks: cuBLAS called straight through JCublas, without HTS. */
final class DirectGemm {

    private DirectGemm() {}

    /** Square {@code C = A B} of n x n matrices on the handle's stream. */
    static void gemm(cublasHandle h, Blas.Precision p, int n, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c) {
        gemm(h, p, n, n, n, a.address(), b.address(), c.address());
    }

    /** Column-major {@code C = A B} (m x k times k x n) straight through JCublas. */
    static void gemm(cublasHandle h, Blas.Precision p, int m, int n, int k, long a, long b, long c) {
        Pointer one = Pointer.to(new float[] {1f});
        Pointer zero = Pointer.to(new float[] {0f});
        int op = cublasOperation.CUBLAS_OP_N;
        CUdeviceptr pa = JCudaApi.pointer(a);
        CUdeviceptr pb = JCudaApi.pointer(b);
        CUdeviceptr pc = JCudaApi.pointer(c);
        switch (p) {
            case FP32 -> {
                JCublas2.cublasSetMathMode(h, cublasMath.CUBLAS_DEFAULT_MATH);
                JCublas2.cublasSgemm(h, op, op, m, n, k, one, pa, m, pb, k, zero, pc, m);
            }
            case TF32 -> {
                JCublas2.cublasSetMathMode(h, cublasMath.CUBLAS_TF32_TENSOR_OP_MATH);
                JCublas2.cublasSgemm(h, op, op, m, n, k, one, pa, m, pb, k, zero, pc, m);
            }
            default -> {
                JCublas2.cublasSetMathMode(h, cublasMath.CUBLAS_DEFAULT_MATH);
                JCublas2.cublasSgemmEx(
                        h,
                        op,
                        op,
                        m,
                        n,
                        k,
                        one,
                        pa,
                        cudaDataType.CUDA_R_16BF,
                        m,
                        pb,
                        cudaDataType.CUDA_R_16BF,
                        k,
                        zero,
                        pc,
                        cudaDataType.CUDA_R_16BF,
                        m);
            }
        }
    }
}
