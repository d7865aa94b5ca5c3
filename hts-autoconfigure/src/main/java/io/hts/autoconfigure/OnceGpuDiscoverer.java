package io.hts.autoconfigure;

import io.hts.gpu.cuda.GpuDiscovery;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** A {@link GpuDiscoverer} that discovers on first use and keeps the result. */
final class OnceGpuDiscoverer implements GpuDiscoverer {

    /** The NVIDIA driver's, for the whole class loader. */
    static final GpuDiscoverer DRIVER = new OnceGpuDiscoverer(GpuDiscovery::discover);

    private final Supplier<GpuDiscovery.Result> discovery;
    private volatile GpuDiscovery.@Nullable Result found;

    OnceGpuDiscoverer(Supplier<GpuDiscovery.Result> discovery) {
        this.discovery = discovery;
    }

    @Override
    public GpuDiscovery.Result discover() {
        GpuDiscovery.Result r = found;
        if (r == null) {
            synchronized (this) {
                r = found;
                if (r == null) {
                    r = discovery.get();
                    found = r;
                }
            }
        }
        return r;
    }

    @Override
    public String toString() {
        GpuDiscovery.Result r = found;
        return "GpuDiscoverer[" + (this == DRIVER ? "NVIDIA driver" : "supplied CUDA API") + "; "
                + (r == null ? "not yet run" : r.describe()) + "]";
    }
}
