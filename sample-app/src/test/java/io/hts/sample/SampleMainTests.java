package io.hts.sample;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** The main job runs once without a web server (no free port needed); kept running, it serves the dashboard. */
class SampleMainTests {

    @Test
    void runningOnceStartsNoWebServerAndKeptRunningStartsOne() {
        try (ConfigurableApplicationContext once =
                HtsSampleApplication.application().run("--sample.run-jobs=false")) {
            assertThat(once).isNotInstanceOf(WebServerApplicationContext.class);
        }
        try (ConfigurableApplicationContext kept = HtsSampleApplication.application()
                .run(
                        "--sample.run-jobs=false",
                        "--sample.keep-running=true",
                        "--server.port=0",
                        "--server.address=127.0.0.1")) {
            assertThat(kept).isInstanceOf(WebServerApplicationContext.class);
            assertThat(((WebServerApplicationContext) kept).getWebServer().getPort())
                    .isPositive();
        }
        try (ConfigurableApplicationContext asked = HtsSampleApplication.application()
                .run(
                        "--sample.run-jobs=false",
                        "--spring.main.web-application-type=servlet",
                        "--server.port=0",
                        "--server.address=127.0.0.1")) {
            assertThat(asked)
                    .as("a web application type set elsewhere wins")
                    .isInstanceOf(WebServerApplicationContext.class);
        }
    }
}
