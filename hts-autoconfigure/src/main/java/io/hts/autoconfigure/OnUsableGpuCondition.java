package io.hts.autoconfigure;

import io.hts.gpu.cuda.GpuDiscovery;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code hts.gpu.enabled} is {@code true}, or {@code auto} and a CUDA device is found,
 * usable or not: a GPU that is there but cannot be used gets a backend that reports it DOWN with
 * the reason, while the tasks run on the CPU. With {@code true} and no device it still matches
 * (without discovering), so that the backend's bean fails start-up saying why; with {@code false}
 * nothing is discovered.
 *
 * <p>Conditions run before beans exist, and with {@code auto} whether there is a GPU backend bean at
 * all depends on what discovery finds. So this condition consults the discovery the application
 * supplies: the single {@link GpuDiscoverer} bean, or the NVIDIA driver's ({@link GpuDiscoverer#driver()})
 * when there is none. That bean is looked up without initializing other beans to learn their types
 * and is created here, while the configuration is read, which is why {@link GpuDiscoverer} asks for
 * it to be declared with a {@code static} {@code @Bean} method depending on nothing. The backend's
 * bean takes the same discoverer ({@link #discoverer}) and gets the same result, since a discoverer
 * keeps its result.
 */
final class OnUsableGpuCondition extends SpringBootCondition {

    /**
     * The discoverer the application supplies, or the driver's.
     *
     * @param beans the context's beans, {@code null} when there are none to consult
     * @return the discoverer
     * @throws org.springframework.beans.factory.NoUniqueBeanDefinitionException when the application
     *     declares several and none is primary
     */
    static GpuDiscoverer discoverer(@Nullable ListableBeanFactory beans) {
        return beans == null
                ? GpuDiscoverer.driver()
                : beans.getBeanProvider(GpuDiscoverer.class, false).getIfAvailable(GpuDiscoverer::driver);
    }

    /**
     * What a discoverer found, refusing an answer of {@code null} with a message that names the
     * discoverer and what it must return.
     *
     * @param discoverer the application's or the driver's
     * @return its result
     * @throws IllegalStateException when it answered {@code null}
     */
    static GpuDiscovery.Result discover(GpuDiscoverer discoverer) {
        GpuDiscovery.Result r = discoverer.discover();
        if (r == null) {
            throw new IllegalStateException(
                    "The GpuDiscoverer " + discoverer.getClass().getName()
                            + " returned null from discover(); it must return a GpuDiscovery.Result: what"
                            + " GpuDiscovery.discover(loader) finds, or GpuDiscoverer.through(...) for a simulated CUDA,"
                            + " or a Result without devices when there is no GPU");
        }
        return r;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        GpuProperties.GpuEnablement enabled = Binder.get(context.getEnvironment())
                .bind("hts.gpu.enabled", GpuProperties.GpuEnablement.class)
                .orElse(GpuProperties.GpuEnablement.AUTO);
        return switch (enabled) {
            case FALSE -> ConditionOutcome.noMatch("hts.gpu.enabled is false");
            case TRUE -> ConditionOutcome.match("hts.gpu.enabled is true");
            case AUTO -> {
                GpuDiscovery.Result r = discover(discoverer(context.getBeanFactory()));
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
