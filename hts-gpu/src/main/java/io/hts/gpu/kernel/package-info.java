/**
 * Kernels: the built-in PTX, users' PTX and NVRTC-compiled CUDA C, loaded once per device.
 */
@NullMarked
package io.hts.gpu.kernel;

import org.jspecify.annotations.NullMarked;
