package io.hts.autoconfigure.metrics;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.autoconfigure.HtsGpuAutoConfiguration;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.exec.PartialGpuBackend;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of {@link HtsMetrics} (and {@link HtsGpuMetrics} with a GPU) when Micrometer is
 * on the class path, unless {@code hts.metrics.enabled=false}.
 */
@AutoConfiguration(after = {HtsAutoConfiguration.class, HtsGpuAutoConfiguration.class})
@ConditionalOnClass(MeterRegistry.class)
@Conditional(OnHtsMetricsEnabledCondition.class)
public final class HtsMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Scheduler.class)
    HtsMetrics htsMetrics(Scheduler scheduler) {
        return new HtsMetrics(scheduler);
    }

    /** The GPU memory gauges, when hts-gpu is on the class path and a GPU backend is running. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(GpuBackend.class)
    static final class Gpu {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(DeviceBackend.class)
        HtsGpuMetrics htsGpuMetrics(ObjectProvider<DeviceBackend> backends) {
            List<GpuBackend> all = new ArrayList<>();
            backends.orderedStream()
                    .forEach(b ->
                            running(b).stream().filter(d -> !all.contains(d)).forEach(all::add));
            return new HtsGpuMetrics(all);
        }

        /** The GPU backends that run in a backend bean: none of a GPU that could not be started. */
        private static List<GpuBackend> running(DeviceBackend backend) {
            if (backend instanceof GpuBackend gpu) {
                return List.of(gpu);
            }
            if (backend instanceof MultiGpuBackend host) {
                return host.devices();
            }
            if (backend instanceof PartialGpuBackend partial) {
                return partial.running().map(MultiGpuBackend::devices).orElse(List.of());
            }
            if (backend instanceof CircuitBreakingBackend guarded) {
                return running(guarded.delegate());
            }
            return List.of();
        }
    }
}
