package io.hts.autoconfigure.actuate;

import io.hts.engine.run.Scheduler;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import tools.jackson.databind.json.JsonMapper;

/**
 * On the management context of a servlet application where {@code /actuator/hts} is available: a
 * POST to it that it cannot serve (while it is read-only, or with a body that is not a JSON object)
 * gets an answer saying why and what is accepted ({@link HtsWriteRequestFilter}).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(JsonMapper.class)
@ConditionalOnBean(Scheduler.class)
@ConditionalOnAvailableEndpoint(HtsEndpoint.class)
public final class HtsEndpointManagementContextConfiguration {

    @Bean
    FilterRegistrationBean<HtsWriteRequestFilter> htsWriteRequestFilter(Environment environment,
            WebEndpointProperties web) {
        FilterRegistrationBean<HtsWriteRequestFilter> registration = new FilterRegistrationBean<>(
                new HtsWriteRequestFilter(new PropertiesEndpointAccessResolver(environment)));
        registration.addUrlPatterns(web.getBasePath() + "/hts");
        registration.setName("htsWriteRequestFilter");
        return registration;
    }
}
