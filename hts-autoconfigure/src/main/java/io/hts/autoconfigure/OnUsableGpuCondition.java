package io.hts.autoconfigure;

import io.hts.gpu.cuda.GpuDiscovery;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code hts.gpu.enabled} is {@code true}, or {@code auto} and a usable CUDA device is
 * found (discovery runs once per class loader and never throws). With {@code true} and no device
 * it still matches, so that the backend's bean fails start-up saying why.
 */
final class OnUsableGpuCondition extends SpringBootCondition {

    private static volatile GpuDiscovery.Result discovered;

    static GpuDiscovery.Result discovery() {
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

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        HtsProperties.GpuEnablement enabled = Binder.get(context.getEnvironment())
                .bind("hts.gpu.enabled", HtsProperties.GpuEnablement.class).orElse(HtsProperties.GpuEnablement.AUTO);
        return switch (enabled) {
            case FALSE -> ConditionOutcome.noMatch("hts.gpu.enabled is false");
            case TRUE -> ConditionOutcome.match("hts.gpu.enabled is true");
            case AUTO -> {
                GpuDiscovery.Result r = discovery();
                yield r.available() ? ConditionOutcome.match(r.describe())
                        : ConditionOutcome.noMatch("hts.gpu.enabled is auto and " + r.describe());
            }
        };
    }
}
