package io.hts.autoconfigure;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.GpuDiscovery;
import java.util.function.Supplier;

/**
 * How the GPU auto-configuration ({@link HtsGpuAutoConfiguration}) finds CUDA: by default through
 * the NVIDIA driver ({@link #driver()}); an application, or a test on a simulated device, declares
 * one bean of this type to supply another. The result decides whether there is a GPU backend at
 * all with {@code hts.gpu.enabled=auto}, and which devices it starts on.
 *
 * <p>The auto-configuration's condition asks it while the application's configuration is still
 * being read, before other beans exist, so the bean is created early: declare it with a
 * {@code static} {@code @Bean} method, depending on no other bean:
 *
 * <pre>{@code
 * @Bean
 * static GpuDiscoverer gpuDiscoverer() {
 *     return GpuDiscoverer.through(() -> new MyCudaApi());
 * }
 * }</pre>
 *
 * The condition and the backend's bean both ask it, so it must give the same result every time:
 * {@link #driver()} and {@link #through} discover once and keep the result. It must not throw: a
 * driver that cannot be used is an {@linkplain GpuDiscovery.Result#available() unavailable} result
 * with the reason, as {@link GpuDiscovery} gives.
 */
@FunctionalInterface
public interface GpuDiscoverer {

    /**
     * Finds the CUDA devices.
     *
     * @return what was found, or why nothing usable was; the same result each call
     */
    GpuDiscovery.Result discover();

    /**
     * The default: the NVIDIA driver through JCuda ({@link GpuDiscovery#discover()}), once per class
     * loader (a driver is loaded once per process).
     *
     * @return the driver's discoverer
     */
    static GpuDiscoverer driver() {
        return OnceGpuDiscoverer.DRIVER;
    }

    /**
     * Discovers once through the given CUDA API ({@link GpuDiscovery#discover(Supplier)}), on
     * first use, and keeps the result: for a simulated device in tests, or an API of the
     * application's own.
     *
     * @param loader loads the API; may throw anything, which makes the result unavailable with the reason
     * @return the discoverer
     */
    static GpuDiscoverer through(Supplier<? extends CudaApi> loader) {
        return new OnceGpuDiscoverer(() -> GpuDiscovery.discover(loader));
    }
}
