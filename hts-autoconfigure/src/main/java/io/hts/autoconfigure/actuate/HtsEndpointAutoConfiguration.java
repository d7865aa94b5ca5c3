package io.hts.autoconfigure.actuate;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.engine.run.Scheduler;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** Auto-configuration of the {@code hts}, {@code htsevents} and {@code htsprofiler} Actuator endpoints, when Actuator is on the class path. */
@AutoConfiguration(after = HtsAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
public final class HtsEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Scheduler.class)
    @ConditionalOnAvailableEndpoint
    HtsEndpoint htsEndpoint(Scheduler scheduler) {
        return new HtsEndpoint(scheduler);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Scheduler.class)
    @ConditionalOnAvailableEndpoint
    HtsEventsEndpoint htsEventsEndpoint(Scheduler scheduler) {
        return new HtsEventsEndpoint(scheduler);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Scheduler.class)
    @ConditionalOnAvailableEndpoint
    HtsProfilerEndpoint htsProfilerEndpoint(Scheduler scheduler) {
        return new HtsProfilerEndpoint(scheduler);
    }
}
