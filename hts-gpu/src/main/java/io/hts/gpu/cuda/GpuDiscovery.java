package io.hts.gpu.cuda;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the CUDA devices, and never throws doing it: no JCuda on the class path, natives that do
 * not load, no driver, no device: each gives an {@linkplain GpuDiscovery.Result#available()
 * unavailable} result with the reason, logged once, and HTS runs everything on the CPU. Where the
 * NVIDIA driver's library is not where the dynamic linker looks ({@link DriverLibrary}), JCuda is
 * not touched at all, so a machine without a driver does not unpack JCuda's natives.
 */
public final class GpuDiscovery {

    private static final Logger log = LoggerFactory.getLogger(GpuDiscovery.class);

    private GpuDiscovery() {}

    /**
     * What discovery found.
     *
     * @param api the CUDA API, when the driver loaded
     * @param devices the devices found (empty when unavailable)
     * @param driverVersion the driver's CUDA version (e.g. 13000), 0 when unknown
     * @param reason why no GPU can be used, {@code null} when one can
     * @param deviceCount how many devices the driver reports: {@code devices().size()}, more when
     *     the driver counted devices that could then not be queried, 0 when it did not load
     */
    public record Result(
            @Nullable CudaApi api,
            List<DeviceInfo> devices,
            int driverVersion,
            @Nullable String reason,
            int deviceCount) {

        /**
         * A result whose device count is its devices'.
         *
         * @param api the CUDA API, when the driver loaded
         * @param devices the devices found (empty when unavailable)
         * @param driverVersion the driver's CUDA version, 0 when unknown
         * @param reason why no GPU can be used, {@code null} when one can
         */
        public Result(@Nullable CudaApi api, List<DeviceInfo> devices, int driverVersion, @Nullable String reason) {
            this(api, devices, driverVersion, reason, devices.size());
        }

        /** Whether at least one device can be used. */
        public boolean available() {
            return reason == null && api != null && !devices.isEmpty();
        }

        /**
         * Whether the driver reports devices that cannot be used (they could not be queried): a GPU
         * is there but broken, which is not the same as no GPU at all.
         */
        public boolean presentButUnusable() {
            return !available() && deviceCount > 0;
        }

        /** A one-line description: the devices, or why there are none. */
        public String describe() {
            if (!available()) {
                return "GPU unavailable: " + reason;
            }
            return devices.size() + " CUDA device(s), driver CUDA " + driverVersion / 1000 + "."
                    + driverVersion % 1000 / 10 + ": " + devices;
        }
    }

    /** Discovers through JCuda, when the NVIDIA driver's library is there. */
    public static Result discover() {
        return discover(DriverLibrary.ofThisSystem(), () -> JCudaApi.load()); // a lambda: JCuda stays unlinked
    }

    /**
     * Discovers through the given API once the driver's library is found.
     *
     * @param driver where the driver's library should be
     * @param loader loads the API; may throw anything; not called without the driver's library
     * @return the result, never an exception
     */
    static Result discover(DriverLibrary driver, Supplier<? extends CudaApi> loader) {
        String missing;
        try {
            missing = driver.missing();
        } catch (RuntimeException ex) {
            missing = null; // the check is only a shortcut: JCuda's loading decides
        }
        return report(missing != null ? unavailable(null, 0, missing) : probe(loader));
    }

    /**
     * Discovers through the given API (tests pass a simulated or failing one).
     *
     * @param loader loads the API; may throw anything
     * @return the result, never an exception
     */
    public static Result discover(Supplier<? extends CudaApi> loader) {
        return report(probe(loader));
    }

    private static Result report(Result r) {
        if (r.available()) {
            log.info("HTS GPU backend: {}", r.describe());
        } else {
            log.info("HTS GPU backend unavailable, tasks run on the CPU: {}", r.reason());
        }
        return r;
    }

    private static Result probe(Supplier<? extends CudaApi> loader) {
        CudaApi api;
        try {
            api = loader.get();
        } catch (NoClassDefFoundError ex) {
            return unavailable(null, 0, "JCuda is not on the class path (" + ex.getMessage() + ")");
        } catch (UnsatisfiedLinkError ex) {
            return unavailable(
                    null,
                    0,
                    "the CUDA driver or JCuda's native library could not be loaded: " + linkFailure(ex)
                            + " (is an NVIDIA driver installed, with libcuda.so.1 on the library path?)");
        } catch (CudaException ex) {
            return unavailable(null, 0, "the CUDA driver refused to start: " + ex.getMessage());
        } catch (Throwable ex) {
            return unavailable(null, 0, "CUDA could not be initialized: " + ex);
        }
        int version = 0;
        int count;
        try {
            version = api.driverVersion();
            count = api.deviceCount();
        } catch (Throwable ex) {
            return unavailable(api, version, "CUDA devices could not be queried: " + ex);
        }
        if (count == 0) {
            return unavailable(api, version, "the CUDA driver reports no device");
        }
        List<DeviceInfo> devices = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            try {
                devices.add(api.deviceInfo(i));
            } catch (Throwable ex) {
                return new Result(
                        api,
                        List.of(),
                        version,
                        "CUDA devices could not be queried: the driver reports "
                                + count + ", and cuda:" + i + " failed: "
                                + (ex instanceof CudaException c ? c.getMessage() : ex.toString()),
                        count);
            }
        }
        return new Result(api, List.copyOf(devices), version, null);
    }

    private static Result unavailable(@Nullable CudaApi api, int version, String reason) {
        return new Result(api, List.of(), version, reason);
    }

    /**
     * The line of JCuda's many-line loading report that says what failed (the last linker error
     * it quotes, e.g. {@code libcuda.so.1: cannot open shared object file}), or its first line.
     */
    static String linkFailure(UnsatisfiedLinkError ex) {
        String message = String.valueOf(ex.getMessage());
        String prefix = UnsatisfiedLinkError.class.getName() + ": ";
        String found = null;
        for (String line : message.split("\\R")) {
            if (line.startsWith(prefix)) {
                found = line.substring(prefix.length());
            }
        }
        return found != null ? found : message.lines().findFirst().orElse(message);
    }
}
