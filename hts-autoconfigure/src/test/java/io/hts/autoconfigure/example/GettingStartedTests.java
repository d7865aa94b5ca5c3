package io.hts.autoconfigure.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.DocExamples;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/**
 * docs/getting-started.md's Spring Boot application, started with the page's application.yml: the
 * pages show its code and configuration as written, its service runs both graphs, the properties
 * and the customizer took effect, and the Actuator endpoints the page calls answer.
 */
@SpringBootTest(
        classes = FeaturesApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        // the page's application.yml, after the tests' application.properties (which keeps Spring
        // Security, on the test class path for DashboardSecurityTests, off)
        properties =
                "spring.config.location=classpath:/application.properties,classpath:/io/hts/autoconfigure/example/application.yml")
@ExtendWith(OutputCaptureExtension.class)
class GettingStartedTests {

    @Autowired
    FeatureService service;

    @Autowired
    Scheduler scheduler;

    @LocalServerPort
    int port;

    @Test
    void thePagesShowTheAutoConfigurationModulesExamplesAsWritten() {
        DocExamples.assertShownAsWritten("hts-autoconfigure");
    }

    @Test
    void theServiceRunsTheGraphBeanAndTheAnnotatedGraph(CapturedOutput output) throws Exception {
        assertThat(service.mean()).isBetween(0.49, 0.51);
        assertThat(service.report().get(10, TimeUnit.SECONDS)).isEqualTo("report: 2 errors in 4 requests");
        assertThat(output.getOut()).contains("audit: run ").contains("of graph 'features': SUCCEEDED");
    }

    @Test
    void thePropertiesAndTheCustomizerTookEffect() {
        assertThat(scheduler.parallelism()).isEqualTo(4);
        assertThat(scheduler.policy().name()).isEqualTo("default");
        assertThat(scheduler.profiler().retainedRuns()).as("the customizer's").isEqualTo(100);
        assertThat(scheduler.registeredGraphs()).containsKeys("features", "report");
    }

    @Test
    void theActuatorEndpointsOfThePageAnswer() throws Exception {
        service.mean();
        JsonNode hts = LocalHttp.json(LocalHttp.get(port, "/actuator/hts"));
        assertThat(hts.get("policy").asString()).isEqualTo("default");
        assertThat(hts.get("graphs").toString()).contains("features").contains("report");

        JsonNode profiler = LocalHttp.json(LocalHttp.get(port, "/actuator/htsprofiler"));
        assertThat(profiler.toString()).contains("features");

        HttpResponse<String> events = LocalHttp.get(port, "/actuator/htsevents?type=run_succeeded&limit=5");
        assertThat(events.statusCode()).isEqualTo(200);
        assertThat(events.body()).contains("RUN_SUCCEEDED");

        HttpResponse<String> health = LocalHttp.get(port, "/actuator/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"hts\"");
    }
}
