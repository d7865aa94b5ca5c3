/**
 * HTS's GPU module: CUDA through JCuda, with streams, a buddy-system device memory pool, device
 * buffers, kernels and cuBLAS, and the GPU execution backend the engine's policies place tasks on.
 */
@NullMarked
package io.hts.gpu;

import org.jspecify.annotations.NullMarked;
