package io.hts.autoconfigure.actuate;

import io.hts.autoconfigure.HtsProperties;
import io.hts.engine.run.Scheduler;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The live event stream ({@link HtsEventStreamController}) on the management context (the main
 * one, or the management server's when it has a port of its own), for servlet applications where
 * the {@code htsevents} endpoint is available.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(SseEmitter.class)
@ConditionalOnBean(Scheduler.class)
@ConditionalOnAvailableEndpoint(HtsEventsEndpoint.class)
public final class HtsEventStreamManagementContextConfiguration {

    @Bean
    @ConditionalOnMissingBean
    HtsEventStream htsEventStream(Scheduler scheduler, HtsProperties properties) {
        return new HtsEventStream(scheduler, properties.getEvents().getStreamTimeout());
    }

    @Bean
    @ConditionalOnMissingBean
    HtsEventStreamController htsEventStreamController(HtsEventStream stream) {
        return new HtsEventStreamController(stream);
    }
}
