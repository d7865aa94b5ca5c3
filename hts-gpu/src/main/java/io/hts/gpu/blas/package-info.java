/**
 * cuBLAS: GEMM in FP32, TF32, BF16 and FP16 on a GPU task's stream.
 */
@NullMarked
package io.hts.gpu.blas;

import org.jspecify.annotations.NullMarked;
