/**
 * Scenario (c), an operator benchmark: GEMM at several sizes and AXPY (memory-bound) on the CPU,
 * through a JVM BLAS with the GEMM cut into tiles that the pool spreads over its workers, and on the
 * GPU when one is usable (cuBLAS, the built-in AXPY kernel); each result checked.
 */
@NullMarked
package io.hts.sample.operators;

import org.jspecify.annotations.NullMarked;
