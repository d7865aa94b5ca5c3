package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.DashboardApp;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Issue 33 item 9: an action the server refuses (this user may not act: Spring Security answers a
 * POST 403) says so where it is seen, with the server's status and reason, and keeps saying so
 * until it is closed; nothing was started.
 */
class DashboardRefusedActionBrowserTests extends ChromiumTests {

    /** Anyone reads the endpoints; any other request is refused (403: no sign-in is asked for). */
    @Configuration(proxyBeanMethods = false)
    static class NoOneActs {

        @Bean
        SecurityFilterChain managementEndpoints(HttpSecurity http) throws Exception {
            http.securityMatcher(EndpointRequest.toAnyEndpoint())
                    .authorizeHttpRequests(
                            requests -> requests.requestMatchers(request -> HttpMethod.GET.matches(request.getMethod()))
                                    .permitAll()
                                    .anyRequest()
                                    .denyAll())
                    .csrf(csrf -> csrf.spa());
            return http.build();
        }
    }

    @Test
    void aRunTheServerRefusesSaysWhyUntilTheNoticeIsClosed() throws Exception {
        try (ConfigurableApplicationContext context = LocalHttp.server(DashboardApp.class)
                .sources(NoOneActs.class)
                .properties(
                        "hts.executor.threads=2",
                        "hts.dashboard.enabled=true",
                        "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard",
                        "management.endpoint.hts.access=unrestricted")
                // Spring Security's auto-configuration, as an application has it (an argument outranks
                // the tests' application.properties, which switches it off)
                .run("--spring.autoconfigure.exclude=")) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            browser.open("http://127.0.0.1:" + LocalHttp.port(context) + "/actuator/htsdashboard#/");
            String run = "button.action-run[data-graph=quick]";
            DashboardPages.eventually(() -> assertThat(browser.all(run)).hasSize(1));
            browser.script("document.querySelector(arguments[0]).click()", run); // the table is redrawn at each poll
            String refused = "#notice .refused";
            DashboardPages.eventually(() -> assertThat(browser.driver()
                            .findElement(By.cssSelector(refused))
                            .getText())
                    .startsWith("Run (graph quick) refused: HTTP 403 Forbidden"));
            browser.screenshot("run-refused");
            assertThat(scheduler.activeRuns()).isEmpty();
            assertThat(scheduler.profiler().recordedRuns()).isZero();
            // longer than an ordinary notice stays (12 s)
            Awaitility.await()
                    .during(Duration.ofSeconds(13))
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> browser.all(refused).size() == 1);
            browser.driver()
                    .findElement(By.cssSelector(refused + " button.close"))
                    .click();
            assertThat(browser.all(refused)).isEmpty();
            browser.open("about:blank"); // before the application stops, so that its polls do not fail
            assertThat(browser.consoleErrors())
                    .as("the browser logs the refused POST, and nothing else")
                    .isNotEmpty()
                    .allMatch(e -> e.contains("403"));
        }
    }
}
