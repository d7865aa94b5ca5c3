package io.hts.gpu.device;

import io.hts.gpu.cuda.GpuDiscovery;
import org.junit.jupiter.api.Assumptions;

/**
 * Tests on a real GPU skip where none is found (CI, the development box) unless
 * {@code HTS_GPU_TESTS=required} (set by the GPU machine's kit), and then fail: a GPU test that
 * silently skips on the GPU machine proves nothing.
 */
final class GpuRequirement {

    private static GpuDiscovery.Result found;

    private GpuRequirement() {
    }

    static synchronized GpuDiscovery.Result gpu() {
        if (found == null) {
            found = GpuDiscovery.discover();
        }
        if (!found.available()) {
            if ("required".equalsIgnoreCase(System.getenv("HTS_GPU_TESTS"))) {
                throw new AssertionError("HTS_GPU_TESTS=required but no GPU can be used: " + found.reason());
            }
            Assumptions.abort("no GPU: " + found.reason());
        }
        return found;
    }
}
