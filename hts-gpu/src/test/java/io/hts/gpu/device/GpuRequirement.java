package io.hts.gpu.device;

import io.hts.gpu.cuda.GpuDiscovery;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * Tests on a real GPU skip where none is found (CI, the development box) unless
 * {@code HTS_GPU_TESTS=required} (set by the GPU machine's kit), and then fail: a GPU test that
 * silently skips on the GPU machine proves nothing.
 */
final class GpuRequirement {

    private static GpuDiscovery.Result found;

    private GpuRequirement() {}

    /** Why no GPU can be used here, or null when one can. */
    static synchronized @Nullable String missing() {
        if (found == null) {
            found = GpuDiscovery.discover();
        }
        return found.available() ? null : found.reason();
    }

    /** Whether the GPU machine's kit requires the GPU tests to run ({@code HTS_GPU_TESTS=required}). */
    static boolean required() {
        return "required".equalsIgnoreCase(System.getenv("HTS_GPU_TESTS"));
    }

    static synchronized GpuDiscovery.Result gpu() {
        missing();
        if (!found.available()) {
            if (required()) {
                throw new AssertionError("HTS_GPU_TESTS=required but no GPU can be used: " + found.reason());
            }
            Assumptions.abort("no GPU: " + found.reason());
        }
        return found;
    }
}
