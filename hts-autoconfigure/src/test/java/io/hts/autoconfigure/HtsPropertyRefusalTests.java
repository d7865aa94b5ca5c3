package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The invalid-property reports no other test triggers: each bound the validator checks (the ones
 * {@code HtsPropertyErrorsTests} and the others leave out), and each kind of value the binder cannot
 * read at all (a whole number, a number, a boolean, a list). Every report names the property, the
 * value as written and what is accepted.
 */
class HtsPropertyRefusalTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsGpuAutoConfiguration.class, HtsAutoConfiguration.class));

    /** A value the validator refuses: an {@link InvalidHtsPropertyException} and HTS's report. */
    private void refused(String property, String written, String accepted) {
        runner.withPropertyValues(property + "=" + written).run(context -> {
            assertThat(context).hasFailed();
            Throwable root = context.getStartupFailure();
            while (root.getCause() != null && !(root instanceof InvalidHtsPropertyException)) {
                root = root.getCause();
            }
            assertThat(root).as(property + "=" + written).isInstanceOf(InvalidHtsPropertyException.class);
            InvalidHtsPropertyException invalid = (InvalidHtsPropertyException) root;
            assertThat(invalid.property()).isEqualTo(property);
            assertThat(String.valueOf(invalid.value()))
                    .as("the value as written")
                    .isEqualTo(written);
            assertThat(invalid.accepted()).isEqualTo(accepted);
            assertThat(invalid.getMessage())
                    .isEqualTo(
                            "Invalid value '" + written + "' for property '" + property + "': accepted is " + accepted);
            FailureAnalysis report = new HtsFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(report.getDescription())
                    .isEqualTo("Invalid value '" + written + "' for property '" + property + "'.");
            assertThat(report.getAction()).contains(property + " accepts " + accepted);
        });
    }

    @Test
    void profilingBoundsAreChecked() {
        refused("hts.profiling.retained-runs", "-1", "an integer of 0 or more");
        refused("hts.profiling.retained-size", "-1MB", "a size of 0 or more, such as 64MB");
    }

    @Test
    void eventBoundsAreChecked() {
        refused(
                "hts.events.buffer-size",
                "-1",
                "an integer from 0 to 10000000 (each kept event holds its text:" + " a million is tens of MB)");
        refused(
                "hts.events.buffer-size",
                "10000001",
                "an integer from 0 to 10000000 (each kept event holds its" + " text: a million is tens of MB)");
        refused("hts.events.stream-timeout", "-1s", "a duration above 0 and at most 36525d, such as 30m");
        refused("hts.events.stream-timeout", "36526d", "a duration above 0 and at most 36525d, such as 30m");
    }

    @Test
    void taskDefaultsAreCheckedAtTheirUpperBounds() {
        refused("hts.tasks.default-retries", "2147483647", "an integer from 0 to 2147483646");
        refused("hts.tasks.default-timeout", "36526d", "a duration from 1ms to 36525d, such as 30s, or unset for none");
        refused("hts.tasks.default-timeout", "0ms", "a duration from 1ms to 36525d, such as 30s, or unset for none");
        refused("hts.tasks.default-backoff", "36526d", "a duration from 0 to 36525d, such as 100ms");
    }

    /** Checked whether or not hts.cluster.enabled, as every hts.* property. */
    @Test
    void clusterBoundsAreChecked() {
        refused(
                "hts.cluster.inline-limit",
                "2GB",
                "a size from 0B (every payload by reference) to 2047MB, such as 64KB (the default)");
        refused(
                "hts.cluster.round-trip",
                "0ms",
                "a duration above 0 and at most 1m, such as 800us (loopback, the default) or 2ms");
        refused(
                "hts.cluster.round-trip",
                "2m",
                "a duration above 0 and at most 1m, such as 800us (loopback, the default) or 2ms");
        refused("hts.cluster.overhead", "1", "a share above 0 and below 1, such as 0.05 (5 %, the default)");
        refused("hts.cluster.overhead", "0", "a share above 0 and below 1, such as 0.05 (5 %, the default)");
        refused("hts.cluster.slice-attempts", "0", "an integer from 1 to 100, such as 3 (the default)");
        refused(
                "hts.cluster.minimum-members",
                "0",
                "an integer of at least 1, such as 3 for a cluster of three members");
        refused(
                "hts.cluster.allowed-classes",
                "com.example.*,!java.lang.Runtime",
                "packages (com.example.sweep.*), package trees (com.example.**) or class names, comma-separated;"
                        + " no exclusions (!) or limits (maxdepth=)");
        refused("hts.cluster.hazelcast.executor-name", "", "a name that is not blank, the same on every member");
        refused(
                "hts.cluster.hazelcast.payload-map",
                "hts-members",
                "a map name other than hts.cluster.hazelcast.members-map (hts-members), such as hts-payloads (the"
                        + " default)");
        refused(
                "hts.cluster.hazelcast.payload-time-to-live",
                "500ms",
                "a duration from 1s to 365d, such as 10m (the default)");
        refused("hts.cluster.hazelcast.status-interval", "5ms", "a duration from 10ms to 1h, such as 1s (the default)");
    }

    @Test
    void schedulerBoundsAreChecked() {
        refused(
                "hts.scheduler.stall-timeout",
                "9ms",
                "a duration from 10ms to 36525d, such as 30s, or unset for no" + " watchdog");
    }

    @Test
    void gpuCircuitBreakerBoundsAreCheckedWithoutAGpu() {
        refused("hts.gpu.circuit-breaker.sliding-window-size", "0", "an integer of at least 1, such as 20");
        refused(
                "hts.gpu.circuit-breaker.wait-duration-in-open-state",
                "0ms",
                "a duration of at least 1ms, such as 30s");
        refused(
                "hts.gpu.circuit-breaker.wait-duration-in-open-state",
                "36526d",
                "a duration of at least 1ms, such as 30s");
        refused(
                "hts.gpu.circuit-breaker.failure-rate-threshold",
                "0",
                "a percentage above 0 and at most 100, such as 50");
    }

    /** A value the binder cannot read: HTS's bind-failure report, in the form one writes. */
    private void unreadable(String property, String written, String accepted) {
        runner.withPropertyValues(property + "=" + written).run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis report = new HtsBindFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(report).as(property + "=" + written).isNotNull();
            assertThat(report.getDescription())
                    .startsWith("Invalid value '" + written + "' for property '" + property + "'");
            assertThat(report.getAction())
                    .isEqualTo("Update your application's configuration: " + property + " accepts " + accepted + ".");
        });
    }

    @Test
    void valuesThatCannotBeReadAreReportedWithTheFormsAccepted() {
        unreadable("hts.executor.threads", "many", "a whole number");
        unreadable("hts.events.buffer-size", "1e3", "a whole number");
        unreadable("hts.gpu.circuit-breaker.failure-rate-threshold", "half", "a number");
        unreadable("hts.profiling.enabled", "maybe", "true or false");
        unreadable("hts.logging.mdc", "sometimes", "true or false");
        unreadable(
                "hts.events.stream-timeout",
                "forever",
                "a duration such as 500ms, 5s, 2m or 1h (units ns, us, ms," + " s, m, h, d), or ISO-8601 such as PT5S");
        unreadable(
                "hts.tasks.default-backoff",
                "a bit",
                "a duration such as 500ms, 5s, 2m or 1h (units ns, us, ms," + " s, m, h, d), or ISO-8601 such as PT5S");
    }

    @Test
    void aListOfDevicesThatAreNotNumbersIsReportedNamingTheProperty() {
        runner.withPropertyValues("hts.gpu.devices=first,second").run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis report = new HtsBindFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(report).isNotNull();
            assertThat(report.getDescription()).contains("for property 'hts.gpu.devices");
            assertThat(report.getAction())
                    .startsWith("Update your application's configuration: hts.gpu.devices")
                    .containsAnyOf("a comma-separated list, such as 0,1", "a whole number");
        });
    }
}
