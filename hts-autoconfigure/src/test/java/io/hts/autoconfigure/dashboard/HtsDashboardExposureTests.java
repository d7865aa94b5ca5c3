package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.autoconfigure.actuate.HtsEndpointAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** The dashboard turned on but its endpoint not exposed: the application says what to set, instead of a bare 404. */
@ExtendWith(OutputCaptureExtension.class)
class HtsDashboardExposureTests {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    HtsAutoConfiguration.class,
                    HtsEndpointAutoConfiguration.class,
                    HtsDashboardAutoConfiguration.class))
            .withPropertyValues("hts.executor.threads=1", "hts.dashboard.enabled=true");

    @Test
    void enabledButNotExposedSaysWhichPropertyExposesIt(CapturedOutput output) {
        runner.withPropertyValues("management.endpoints.web.exposure.include=hts,htsevents,htsprofiler")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(HtsDashboardEndpoint.class);
                    assertThat(output.getOut() + output.getErr())
                            .contains("hts.dashboard.enabled is true but the htsdashboard endpoint is not available")
                            .contains("add htsdashboard to management.endpoints.web.exposure.include");
                });
    }

    @Test
    void enabledAndExposedSaysNothing(CapturedOutput output) {
        runner.withPropertyValues("management.endpoints.web.exposure.include=htsdashboard")
                .run(context -> {
                    assertThat(context).hasSingleBean(HtsDashboardEndpoint.class);
                    assertThat(output.getOut() + output.getErr())
                            .doesNotContain("htsdashboard endpoint is not available");
                });
    }
}
