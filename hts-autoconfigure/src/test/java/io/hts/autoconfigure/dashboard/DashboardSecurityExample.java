package io.hts.autoconfigure.dashboard;

import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * docs/dashboard.md's example, as the page shows it (a test checks the page against this file and
 * runs it: {@code DashboardSecurityTests}): the management endpoints, the dashboard among them,
 * answer any GET, and a POST (the dashboard's actions) only to a user with the role
 * {@code HTS_OPERATOR}, signed in with HTTP Basic; the CSRF token travels in the
 * {@code XSRF-TOKEN} cookie, which the dashboard sends back.
 */
// spotless:off
@Configuration(proxyBeanMethods = false)
public class DashboardSecurityExample {

    @Bean
    SecurityFilterChain managementEndpoints(HttpSecurity http) throws Exception {
        http.securityMatcher(EndpointRequest.toAnyEndpoint())
                .authorizeHttpRequests(requests -> requests
                        .requestMatchers(request -> HttpMethod.GET.matches(request.getMethod())).permitAll()
                        .anyRequest().hasRole("HTS_OPERATOR"))
                .httpBasic(Customizer.withDefaults())
                .csrf(csrf -> csrf.spa());
        return http.build();
    }
}
// spotless:on
