package io.hts.autoconfigure.actuate;

import io.hts.engine.run.Scheduler;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletPath;
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
@ConditionalOnClass({JsonMapper.class, DispatcherServletPath.class})
@ConditionalOnBean(Scheduler.class)
@ConditionalOnAvailableEndpoint(HtsEndpoint.class)
public final class HtsEndpointManagementContextConfiguration {

    @Bean
    FilterRegistrationBean<HtsWriteRequestFilter> htsWriteRequestFilter(
            Environment environment, WebEndpointProperties web, ObjectProvider<DispatcherServletPath> servletPath) {
        FilterRegistrationBean<HtsWriteRequestFilter> registration = new FilterRegistrationBean<>(
                new HtsWriteRequestFilter(new PropertiesEndpointAccessResolver(environment)));
        // the endpoint's path as the servlet container sees it: its mapping, under the dispatcher servlet's path
        String path = web.getBasePath() + "/" + web.getPathMapping().getOrDefault("hts", "hts");
        DispatcherServletPath dispatcher = servletPath.getIfAvailable();
        registration.addUrlPatterns(dispatcher == null ? path : dispatcher.getRelativePath(path));
        registration.setName("htsWriteRequestFilter");
        return registration;
    }
}
