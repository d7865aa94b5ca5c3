package io.hts.gpu.kernel;

import io.hts.gpu.cuda.CudaApi;

/**
 * A kernel loaded on one device, ready to launch.
 *
 * @param name its extern "C" name
 * @param device the device it is loaded on
 * @param function the loaded function
 */
public record Kernel(String name, int device, CudaApi.Function function) {
}
