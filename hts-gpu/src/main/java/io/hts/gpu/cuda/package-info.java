/**
 * The CUDA layer: the small {@link io.hts.gpu.cuda.CudaApi} over the driver calls HTS makes, its
 * JCuda implementation, error classification and device discovery.
 */
@NullMarked
package io.hts.gpu.cuda;

import org.jspecify.annotations.NullMarked;
