package io.hts.sample;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The main job runs the scenarios once and prints their summary, without a web server (no free port
 * needed); kept running, it serves the dashboard.
 */
@ExtendWith(OutputCaptureExtension.class)
class SampleMainTests {

    @Test
    void theMainJobRunsEveryScenarioAndPrintsABlockForEach(CapturedOutput output) {
        try (ConfigurableApplicationContext once =
                HtsSampleApplication.application().run("--spring.profiles.active=small")) {
            assertThat(once.isActive()).as("it exits after the summary").isFalse();
        }
        String printed = output.getOut();
        assertThat(printed)
                .contains("HTS sample: ", "[1/5] (a) features: 20,000 rows x 8 float columns in 8 shards")
                .contains("==== HTS sample: summary")
                .containsPattern("\\(a\\) features: SUCCEEDED in [0-9.]+ m?s, 43 tasks")
                .containsPattern("\\(b\\) sweep: SUCCEEDED in [0-9.]+ m?s, 50 tasks")
                .containsPattern("\\(c\\) operators: SUCCEEDED in [0-9.]+ m?s, [0-9]+ tasks")
                .containsPattern("\\(d1\\) independent: SUCCEEDED in [0-9.]+ m?s, 200 tasks")
                .containsPattern("\\(d2\\) layered DAG: SUCCEEDED in [0-9.]+ m?s, 120 tasks")
                .contains("merged 20,000 rows x 3 features", "best of 48 simulations", "GEMM", "AXPY")
                .contains("seed target: 10,000 x 0.5 ms", "seed target: scheduler overhead <= 5.0 %")
                .contains("efficiency ", "scheduler overhead ")
                .contains("==== 5 of 5 scenarios passed their checks in ");
        String summary = printed.substring(printed.indexOf("==== HTS sample: summary"));
        assertThat(summary.lines().count()).as("one screen").isLessThanOrEqualTo(50);
    }

    @Test
    void runningOnceStartsNoWebServerAndKeptRunningStartsOne() {
        try (ConfigurableApplicationContext once =
                HtsSampleApplication.application().run("--sample.run-jobs=false", "--spring.profiles.active=small")) {
            assertThat(once).isNotInstanceOf(WebServerApplicationContext.class);
        }
        try (ConfigurableApplicationContext kept = HtsSampleApplication.application()
                .run(
                        "--sample.run-jobs=false",
                        "--spring.profiles.active=small",
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
                        "--spring.profiles.active=small",
                        "--spring.main.web-application-type=servlet",
                        "--server.port=0",
                        "--server.address=127.0.0.1")) {
            assertThat(asked)
                    .as("a web application type set elsewhere wins")
                    .isInstanceOf(WebServerApplicationContext.class);
        }
    }
}
