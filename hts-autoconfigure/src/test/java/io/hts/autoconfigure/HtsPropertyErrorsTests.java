package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Issue 15 items 3 and 4: a bad hts.* value fails start-up with a report naming the property, the
 * value as written and what is accepted, in the docs' forms, whatever the machine (these run
 * without a GPU, with the GPU auto-configuration present).
 */
@ExtendWith(OutputCaptureExtension.class)
class HtsPropertyErrorsTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsGpuAutoConfiguration.class, HtsAutoConfiguration.class));

    private void refused(String setting, String property, String written, String accepted) {
        runner.withPropertyValues(setting).run(context -> {
            assertThat(context).hasFailed();
            Throwable root = context.getStartupFailure();
            while (root.getCause() != null && !(root instanceof InvalidHtsPropertyException)) {
                root = root.getCause();
            }
            assertThat(root).as(setting).isInstanceOf(InvalidHtsPropertyException.class);
            InvalidHtsPropertyException invalid = (InvalidHtsPropertyException) root;
            assertThat(invalid.property()).isEqualTo(property);
            assertThat(String.valueOf(invalid.value()))
                    .as("the value as written")
                    .isEqualTo(written);
            FailureAnalysis report = new HtsFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(report.getDescription())
                    .isEqualTo("Invalid value '" + written + "' for property '" + property + "'.");
            assertThat(report.getAction()).contains(property + " accepts " + accepted);
        });
    }

    @Test
    void everyPropertyIsCheckedAtStartUpWhateverTheMachine() {
        refused(
                "hts.gpu.circuit-breaker.failure-rate-threshold=150", "hts.gpu.circuit-breaker.failure-rate-threshold",
                "150", "a percentage above 0 and at most 100");
        refused(
                "hts.gpu.memory-pool.arena-size=300MB",
                "hts.gpu.memory-pool.arena-size",
                "300MB",
                "a power of two of at least the minimum block (256B), such as 256MB");
        refused("hts.gpu.streams-per-device=0", "hts.gpu.streams-per-device", "0", "an integer of at least 1");
        refused(
                "hts.gpu.memory-pool.minimum-block=100B",
                "hts.gpu.memory-pool.minimum-block",
                "100B",
                "a power of two of at least 256B");
        refused("hts.gpu.devices=0,0", "hts.gpu.devices", "0,0", "distinct device ordinals");
        refused("hts.gpu.poll-spin=-1ms", "hts.gpu.poll-spin", "-1ms", "a duration of 0 or more");
        refused("hts.tasks.default-backoff=-100ms", "hts.tasks.default-backoff", "-100ms", "a duration from 0 to");
        refused(
                "hts.scheduler.stall-timeout=-5s",
                "hts.scheduler.stall-timeout",
                "-5s",
                "a duration from 10ms to 36525d");
        refused("hts.tasks.default-timeout=-1s", "hts.tasks.default-timeout", "-1s", "a duration from 1ms");
        refused("hts.executor.threads=0", "hts.executor.threads", "0", "an integer from 1 to 65534");
        refused("hts.events.stream-timeout=0s", "hts.events.stream-timeout", "0s", "a duration above 0");
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    private static void start(String setting) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties(setting, "spring.main.banner-mode=off")
                        .run()
                        .close())
                .isInstanceOf(RuntimeException.class);
    }

    /** Values that cannot even be bound: the report HTS gives, not Spring Boot's list of enum constants. */
    @Test
    void anUnknownPolicyIsReportedInTheDocsForm(CapturedOutput output) {
        start("hts.scheduler.policy=fastest");
        assertThat(output)
                .contains("Invalid value 'fastest' for property 'hts.scheduler.policy'")
                .contains("hts.scheduler.policy accepts one of default, gpu-first, cpu-first, round-robin,"
                        + " shortest-job-first")
                .doesNotContain("ROUND_ROBIN");
    }

    @Test
    void aMalformedDurationSaysWhichFormsAreAccepted(CapturedOutput output) {
        start("hts.scheduler.stall-timeout=soon");
        assertThat(output)
                .contains("Invalid value 'soon' for property 'hts.scheduler.stall-timeout'")
                .contains("accepts a duration such as 500ms, 5s, 2m or 1h");
    }

    @Test
    void aNegativeDurationIsEchoedAsWritten(CapturedOutput output) {
        start("hts.scheduler.stall-timeout=-1s");
        assertThat(output)
                .contains("Invalid value '-1s' for property 'hts.scheduler.stall-timeout'")
                .doesNotContain("PT-1S");
    }
}
