package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.DashboardApp;
import io.hts.autoconfigure.support.LocalHttp;
import java.net.HttpCookie;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;

/**
 * docs/dashboard.md's Spring Security example ({@link DashboardSecurityExample}) is on the page as
 * written, and does what the page says, over real HTTP: anyone reads the endpoints and the
 * dashboard; a POST needs a user with the role HTS_OPERATOR and the CSRF token of the XSRF-TOKEN
 * cookie, as the dashboard sends it.
 */
class DashboardSecurityTests {

    /** The application's users: the page leaves them to the application. */
    @Configuration(proxyBeanMethods = false)
    static class Users {

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(
                    User.withUsername("operator")
                            .password("{noop}secret")
                            .roles("HTS_OPERATOR")
                            .build(),
                    User.withUsername("viewer").password("{noop}secret").roles().build());
        }
    }

    private static String basic(String user) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void thePageShowsTheExampleAsWritten() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "dashboard.md"));
        String source =
                Files.readString(Path.of("src/test/java/io/hts/autoconfigure/dashboard/DashboardSecurityExample.java"));
        String example = source.substring(
                source.indexOf("@Configuration(proxyBeanMethods = false)"), source.lastIndexOf('}') + 1);
        assertThat(page)
                .as("docs/dashboard.md shows DashboardSecurityExample as written")
                .contains(example.strip());
    }

    @Test
    void anyoneReadsAndOnlyAnOperatorWithTheCsrfTokenWrites() throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(
                        DashboardApp.class, DashboardSecurityExample.class, Users.class)
                .web(WebApplicationType.SERVLET)
                .properties(
                        "spring.autoconfigure.exclude=", // Spring Security's auto-configuration, as an application has
                        // it
                        "server.port=0",
                        "server.address=127.0.0.1",
                        "spring.main.banner-mode=off",
                        "hts.executor.threads=2",
                        "hts.dashboard.enabled=true",
                        "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard",
                        "management.endpoint.hts.access=unrestricted")
                // Spring Security's auto-configuration, as an application has it (an argument outranks
                // the tests' application.properties, which switches it off)
                .run("--spring.autoconfigure.exclude=")) {
            int port = LocalHttp.port(context);
            assertThat(LocalHttp.get(port, "/actuator/htsdashboard").statusCode())
                    .isEqualTo(200);
            assertThat(LocalHttp.get(port, "/actuator/htsdashboard/dashboard.js")
                            .statusCode())
                    .isEqualTo(200);
            HttpResponse<String> state = LocalHttp.get(port, "/actuator/hts");
            assertThat(state.statusCode()).isEqualTo(200);
            assertThat(LocalHttp.json(state).get("access").asText()).isEqualTo("unrestricted");
            String token = state.headers().allValues("Set-Cookie").stream()
                    .flatMap(c -> HttpCookie.parse(c).stream())
                    .filter(c -> c.getName().equals("XSRF-TOKEN"))
                    .map(HttpCookie::getValue)
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no XSRF-TOKEN cookie in " + state.headers()));
            String run = "{\"run\": \"quick\"}";
            String[] csrf = {"Cookie", "XSRF-TOKEN=" + token, "X-XSRF-TOKEN", token};
            assertThat(LocalHttp.postJson(port, "/actuator/hts", run).statusCode())
                    .as("anonymous, without the CSRF token")
                    .isEqualTo(403);
            assertThat(LocalHttp.postJson(port, "/actuator/hts", run, csrf).statusCode())
                    .as("anonymous")
                    .isEqualTo(401);
            assertThat(LocalHttp.postJson(port, "/actuator/hts", run, "Authorization", basic("operator"))
                            .statusCode())
                    .as("an operator without the CSRF token")
                    .isEqualTo(403);
            assertThat(LocalHttp.postJson(
                                    port,
                                    "/actuator/hts",
                                    run,
                                    "Authorization",
                                    basic("viewer"),
                                    csrf[0],
                                    csrf[1],
                                    csrf[2],
                                    csrf[3])
                            .statusCode())
                    .as("a user without the role")
                    .isEqualTo(403);
            HttpResponse<String> operator = LocalHttp.postJson(
                    port, "/actuator/hts", run, "Authorization", basic("operator"), csrf[0], csrf[1], csrf[2], csrf[3]);
            assertThat(operator.statusCode()).as(operator.body()).isEqualTo(200);
            assertThat(LocalHttp.json(operator).get("submitted").get("graph").asText())
                    .isEqualTo("quick");
        }
    }
}
