package io.hts.gpu.kernel;

import io.hts.gpu.cuda.CudaApi;

/**
 * A kernel loaded on one device, ready to launch, as its device's {@link KernelCache} returns it.
 *
 * <p>A kernel is valid while its module is loaded. The cache keeps a bounded number of modules:
 * one evicted to make room is unloaded once no work of the device is in flight, and every module
 * is unloaded when the backend closes. From then on {@link #function()} throws instead of handing
 * the driver a dangling handle. Task bodies therefore look their kernels up each time (a cache hit
 * costs two map lookups and allocates nothing) rather than keep them across tasks.
 */
public final class Kernel {

    private final String name;
    private final int device;
    private final CudaApi.Function function;
    private final KernelCache.LoadedModule module;

    Kernel(String name, int device, CudaApi.Function function, KernelCache.LoadedModule module) {
        this.name = name;
        this.device = device;
        this.function = function;
        this.module = module;
    }

    /** Its extern "C" name. */
    public String name() {
        return name;
    }

    /** The device it is loaded on. */
    public int device() {
        return device;
    }

    /**
     * The loaded function, for {@link CudaApi#launch}.
     *
     * @return the function
     * @throws IllegalStateException when its module has been unloaded (evicted from the device's
     *     kernel cache, or the backend closed)
     */
    public CudaApi.Function function() {
        if (module.unloaded) {
            throw new IllegalStateException("kernel " + name + " of cuda:" + device + " can no longer be launched: its "
                    + module.origin.description + " was evicted from the device's kernel cache and unloaded (or the"
                    + " backend closed); look kernels up in each task body (GpuContext.kernel/compile, a cache hit)"
                    + " instead of keeping them across tasks");
        }
        return function;
    }

    /** Whether its module is still loaded (false: {@link #function()} throws). */
    public boolean isLoaded() {
        return !module.unloaded;
    }

    @Override
    public String toString() {
        return "Kernel[" + name + " on cuda:" + device + (module.unloaded ? ", unloaded" : "") + "]";
    }
}
