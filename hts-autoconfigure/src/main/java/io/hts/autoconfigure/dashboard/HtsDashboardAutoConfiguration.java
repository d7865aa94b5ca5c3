package io.hts.autoconfigure.dashboard;

import io.hts.autoconfigure.actuate.HtsEndpointAutoConfiguration;
import io.hts.engine.run.Scheduler;
import java.util.Map;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the dashboard ({@link HtsDashboardEndpoint}) in a web application with
 * Actuator, when {@code hts.dashboard.enabled=true} and the {@code htsdashboard} endpoint is
 * available (exposed, and not denied access).
 */
@AutoConfiguration(after = HtsEndpointAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnWebApplication
@ConditionalOnBooleanProperty("hts.dashboard.enabled")
public final class HtsDashboardAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Scheduler.class)
    @ConditionalOnAvailableEndpoint
    HtsDashboardEndpoint htsDashboardEndpoint(ObjectProvider<WebEndpointProperties> web) {
        WebEndpointProperties properties = web.getIfAvailable();
        return new HtsDashboardEndpoint(properties == null ? Map.of() : properties.getPathMapping());
    }

    /**
     * Says at start-up, when the dashboard is on but its endpoint is not there (not exposed, or its
     * access denied), what to set: otherwise the page is a bare 404.
     */
    @Bean
    @ConditionalOnBean(Scheduler.class)
    static SmartInitializingSingleton htsDashboardExposureCheck(ObjectProvider<HtsDashboardEndpoint> endpoint) {
        return () -> {
            if (endpoint.getIfAvailable() == null) {
                LoggerFactory.getLogger(HtsDashboardAutoConfiguration.class)
                        .warn("hts.dashboard.enabled is true but the htsdashboard endpoint is not available, so"
                                + " there is no dashboard: add htsdashboard to"
                                + " management.endpoints.web.exposure.include (and check"
                                + " management.endpoint.htsdashboard.access)");
            }
        };
    }
}
