package io.hts.autoconfigure.metrics;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.engine.run.Scheduler;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** Auto-configuration of {@link HtsMetrics} when Micrometer is on the class path. */
@AutoConfiguration(after = HtsAutoConfiguration.class)
@ConditionalOnClass(MeterRegistry.class)
public final class HtsMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Scheduler.class)
    HtsMetrics htsMetrics(Scheduler scheduler) {
        return new HtsMetrics(scheduler);
    }
}
