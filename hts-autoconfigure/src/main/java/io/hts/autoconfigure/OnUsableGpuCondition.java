package io.hts.autoconfigure;

import java.util.function.Supplier;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.GpuDiscovery;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code hts.gpu.enabled} is {@code true}, or {@code auto} and a CUDA device is found,
 * usable or not (discovery runs once per class loader and never throws): a GPU that is there but
 * cannot be used gets a backend that reports it DOWN with the reason, while the tasks run on the
 * CPU. With {@code true} and no device it still matches, so that the backend's bean fails start-up
 * saying why.
 */
final class OnUsableGpuCondition extends SpringBootCondition {

    private static volatile GpuDiscovery.@Nullable Result discovered;

    /** What the tests of this package put in place of the real discovery (see {@link #discoverThrough}). */
    private static volatile GpuDiscovery.@Nullable Result simulated;

    static GpuDiscovery.Result discovery() {
        GpuDiscovery.Result s = simulated;
        if (s != null) {
            return s;
        }
        GpuDiscovery.Result r = discovered;
        if (r == null) {
            synchronized (OnUsableGpuCondition.class) {
                r = discovered;
                if (r == null) {
                    r = GpuDiscovery.discover();
                    discovered = r;
                }
            }
        }
        return r;
    }

    /**
     * Test seam, internal to this package: until the returned scope is closed, discovery goes
     * through {@code loader} (a simulated CUDA) instead of JCuda. Not for applications.
     *
     * @param loader loads the API
     * @return closes the scope, bringing the real discovery back
     */
    static Scope discoverThrough(Supplier<? extends CudaApi> loader) {
        simulated = GpuDiscovery.discover(loader);
        return () -> simulated = null;
    }

    /** A {@link #discoverThrough} scope. */
    interface Scope extends AutoCloseable {

        @Override
        void close();
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        GpuProperties.GpuEnablement enabled = Binder.get(context.getEnvironment())
                .bind("hts.gpu.enabled", GpuProperties.GpuEnablement.class).orElse(GpuProperties.GpuEnablement.AUTO);
        return switch (enabled) {
            case FALSE -> ConditionOutcome.noMatch("hts.gpu.enabled is false");
            case TRUE -> ConditionOutcome.match("hts.gpu.enabled is true");
            case AUTO -> {
                GpuDiscovery.Result r = discovery();
                if (r.available()) {
                    yield ConditionOutcome.match(r.describe());
                }
                yield r.presentButUnusable()
                        ? ConditionOutcome.match("hts.gpu.enabled is auto and " + r.deviceCount()
                                + " CUDA device(s) are present but cannot be used; the GPU backend reports them DOWN: "
                                + r.reason())
                        : ConditionOutcome.noMatch("hts.gpu.enabled is auto and " + r.describe());
            }
        };
    }
}
