package io.hts.autoconfigure.actuate;

import io.hts.engine.run.Scheduler;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * On the management context of a servlet application where {@code /actuator/hts} is available: a
 * POST to it while it is read-only gets a 405 that names {@code management.endpoint.hts.access}
 * ({@link HtsReadOnlyWriteFilter}).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBean(Scheduler.class)
@ConditionalOnAvailableEndpoint(HtsEndpoint.class)
public final class HtsEndpointManagementContextConfiguration {

    @Bean
    FilterRegistrationBean<HtsReadOnlyWriteFilter> htsReadOnlyWriteFilter(Environment environment,
            WebEndpointProperties web) {
        FilterRegistrationBean<HtsReadOnlyWriteFilter> registration = new FilterRegistrationBean<>(
                new HtsReadOnlyWriteFilter(new PropertiesEndpointAccessResolver(environment)));
        registration.addUrlPatterns(web.getBasePath() + "/hts");
        registration.setName("htsReadOnlyWriteFilter");
        return registration;
    }
}
