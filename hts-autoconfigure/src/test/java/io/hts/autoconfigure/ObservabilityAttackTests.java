package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hts.autoconfigure.annotation.HtsTask;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.StandardEnvironment;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Adversarial checks, as a demanding user, of the promises of docs/configuration.md (start-up
 * checks of every hts.* property, the endpoints' error bodies), of @HtsTask's wiring checks and of
 * the graceful-shutdown warning. Endpoints are exercised over real HTTP.
 */
@ExtendWith(OutputCaptureExtension.class)
class ObservabilityAttackTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    // ================================================================== endpoints over HTTP

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class WebApp {

        @Bean
        TaskGraph broken() {
            TaskGraph g = TaskGraph.named("broken");
            Task<Integer> load = g.task("load").cpu(ctx -> 1);
            Task<Integer> boom = g.task("boom").after(load).cpu(ctx -> {
                throw new IllegalStateException("row 7 is bad");
            });
            g.task("child").after(boom).cpu(ctx -> 2);
            return g;
        }
    }

    record Answer(int status, String body) {

        JsonNode json() {
            return JSON.readTree(body);
        }
    }

    static Answer get(int port, String path, String... headers) throws Exception {
        HttpResponse<String> r = LocalHttp.get(port, path, headers);
        return new Answer(r.statusCode(), r.body());
    }

    static Answer post(int port, String path, String json) throws Exception {
        HttpResponse<String> r = LocalHttp.postJson(port, path, json);
        return new Answer(r.statusCode(), r.body());
    }

    /** A 400 whose body is HTS's problem: it names the parameter, echoes the value and says what is accepted. */
    static void problem(Answer a, int status, String parameter, String value) {
        assertThat(a.status()).as("status; body %s", a.body()).isEqualTo(status);
        JsonNode body = a.json();
        assertThat(body.path("status").asInt()).as(a.body()).isEqualTo(status);
        assertThat(body.path("detail").asString(""))
                .as("detail in %s", a.body())
                .isNotBlank();
        assertThat(body.path("parameter").asString(""))
                .as("parameter in %s", a.body())
                .isEqualTo(parameter);
        assertThat(body.path("value").asString("")).as("value in %s", a.body()).isEqualTo(value);
        assertThat(body.path("accepted").asString(""))
                .as("accepted in %s", a.body())
                .isNotBlank();
    }

    @Nested
    @SpringBootTest(
            classes = WebApp.class,
            webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {
                "server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler",
                "management.endpoint.hts.access=unrestricted"
            })
    class Endpoints {

        @LocalServerPort
        int port;

        @Autowired
        Scheduler scheduler;

        @Autowired
        TaskGraph broken;

        private GraphRun failedRun() {
            GraphRun run = scheduler.submit(broken);
            Throwable t = catchThrowable(run::await);
            assertThat(t).isInstanceOf(GraphRunException.class);
            return run;
        }

        @Test
        void profilerLimitThatIsNotANumberGetsHtsProblemBody() throws Exception {
            GraphRun run = failedRun();
            problem(get(port, "/actuator/htsprofiler/" + run.runId() + "?limit=abc"), 400, "limit", "abc");
        }

        @Test
        void profilerOffsetBeyondAnIntGetsHtsProblemBody() throws Exception {
            GraphRun run = failedRun();
            problem(
                    get(port, "/actuator/htsprofiler/" + run.runId() + "?offset=3000000000"),
                    400,
                    "offset",
                    "3000000000");
        }

        @Test
        void profilerRunIdThatIsNotANumberGetsABodySayingWhatWasWrong() throws Exception {
            Answer a = get(port, "/actuator/htsprofiler/latest");
            assertThat(a.status()).as(a.body()).isIn(400, 404);
            assertThat(a.json().path("detail").asString(""))
                    .as("detail in %s", a.body())
                    .isNotBlank();
        }

        @Test
        void profilerPagesHoldAtTheEdges() throws Exception {
            GraphRun run = failedRun();
            Answer last = get(port, "/actuator/htsprofiler/" + run.runId() + "?offset=2&limit=10000");
            assertThat(last.status()).isEqualTo(200);
            JsonNode list = last.json().path("taskList");
            assertThat(list.path("total").asInt()).isEqualTo(3);
            assertThat(list.path("tasks").size()).isEqualTo(1);
            assertThat(list.path("tasks").get(0).path("task").asString()).isEqualTo("child");
            assertThat(list.path("tasks").get(0).path("cause").asString()).contains("boom");
            Answer beyond = get(port, "/actuator/htsprofiler/" + run.runId() + "?offset=2147483647&limit=10000");
            assertThat(beyond.status()).isEqualTo(200);
            assertThat(beyond.json().path("taskList").path("tasks").size()).isZero();
            JsonNode states = last.json().path("taskStates");
            assertThat(states.path("FAILED").asInt()).isEqualTo(1);
            assertThat(states.path("CANCELLED").asInt()).isEqualTo(1);
            assertThat(states.path("SUCCEEDED").asInt()).isEqualTo(1);
            problem(get(port, "/actuator/htsprofiler/" + run.runId() + "?limit=10001"), 400, "limit", "10001");
            problem(get(port, "/actuator/htsprofiler/" + run.runId() + "?offset=-1"), 400, "offset", "-1");
            Answer unknown = get(port, "/actuator/htsprofiler/-5");
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.json().path("detail").asString("")).contains("-5");
        }

        @Test
        void eventsRunThatIsNotANumberGetsHtsProblemBody() throws Exception {
            problem(get(port, "/actuator/htsevents?runId=abc"), 400, "runId", "abc");
        }

        @Test
        void eventsLimitThatIsNotANumberGetsHtsProblemBody() throws Exception {
            problem(get(port, "/actuator/htsevents?limit=lots"), 400, "limit", "lots");
        }

        @Test
        void eventsUnknownTypeVariantsGetHtsProblemBody() throws Exception {
            problem(get(port, "/actuator/htsevents?type=%20"), 400, "type", " ");
            problem(get(port, "/actuator/htsevents?type=task%20failed"), 400, "type", "task failed");
            assertThat(get(port, "/actuator/htsevents?type=Task-Failed").status())
                    .isEqualTo(200);
        }

        @Test
        void streamRunThatIsNotANumberGetsHtsProblemBody() throws Exception {
            problem(get(port, "/actuator/htsevents/stream?runId=abc"), 400, "runId", "abc");
        }

        @Test
        void streamUnknownTypeAskedForAsAnEventSourceDoesGetTheProblemBody() throws Exception {
            problem(
                    get(port, "/actuator/htsevents/stream?type=exploded", "Accept", "text/event-stream"),
                    400,
                    "type",
                    "exploded");
        }

        @Test
        void postUnknownPolicyVariantsGetHtsProblemBody() throws Exception {
            problem(post(port, "/actuator/hts", "{\"policy\":\"fastest\"}"), 400, "policy", "fastest");
            problem(post(port, "/actuator/hts", "{\"policy\":\"\"}"), 400, "policy", "");
            assertThat(post(port, "/actuator/hts", "{\"policy\":\"ROUND_ROBIN\"}")
                            .status())
                    .isEqualTo(200);
            assertThat(post(port, "/actuator/hts", "{\"policy\":\"default\"}").status())
                    .isEqualTo(200);
        }

        @Test
        void postCancelRunThatIsNotANumberGetsHtsProblemBody() throws Exception {
            problem(post(port, "/actuator/hts", "{\"cancelRun\":\"abc\"}"), 400, "cancelRun", "abc");
        }

        @Test
        void postCancelOfAnUnknownRunIsA404WithABody() throws Exception {
            Answer a = post(port, "/actuator/hts", "{\"cancelRun\":987654321}");
            assertThat(a.status()).as("an unknown run; body %s", a.body()).isEqualTo(404);
            assertThat(a.json().path("detail").asString("")).isNotBlank();
        }
    }

    // ================================================================== properties at start-up

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsGpuAutoConfiguration.class, HtsAutoConfiguration.class));

    private static InvalidHtsPropertyException invalid(Throwable failure) {
        Throwable t = failure;
        while (t != null && !(t instanceof InvalidHtsPropertyException)) {
            t = t.getCause();
        }
        assertThat(t)
                .as("an InvalidHtsPropertyException in the chain of %s", failure)
                .isInstanceOf(InvalidHtsPropertyException.class);
        return (InvalidHtsPropertyException) t;
    }

    private void refusedByRunner(String setting, String property, String written) {
        runner.withPropertyValues(setting).run(context -> {
            assertThat(context).hasFailed();
            InvalidHtsPropertyException ex = invalid(context.getStartupFailure());
            assertThat(ex.property()).isEqualTo(property);
            assertThat(String.valueOf(ex.value())).isEqualTo(written);
            assertThat(ex.accepted()).isNotBlank();
        });
    }

    private static Throwable start(StandardEnvironment environment, String... properties) {
        SpringApplicationBuilder b = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off")
                .properties(properties);
        if (environment != null) {
            b.environment(environment);
        }
        Throwable t = catchThrowable(() -> b.run().close());
        assertThat(t).as("start-up with %s", List.of(properties)).isNotNull();
        return t;
    }

    private static StandardEnvironment env(Map<String, Object> variables) {
        return new StandardEnvironment() {
            @Override
            public Map<String, Object> getSystemEnvironment() {
                return variables;
            }
        };
    }

    @Test
    void tooManyThreadsIsReportedNamingTheProperty() {
        refusedByRunner("hts.executor.threads=65535", "hts.executor.threads", "65535");
    }

    @Test
    void aHugeEventBufferIsReportedNamingThePropertyNotAnOutOfMemoryError() {
        refusedByRunner("hts.events.buffer-size=2147483647", "hts.events.buffer-size", "2147483647");
    }

    @Test
    void aHugeStallTimeoutIsReportedNamingTheProperty() {
        refusedByRunner("hts.scheduler.stall-timeout=200000d", "hts.scheduler.stall-timeout", "200000d");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "hts.scheduler.stallTimeout=-1s",
                "hts.scheduler.stall_timeout=-1s",
                "hts.scheduler.STALL-TIMEOUT=-1s"
            })
    void relaxedNamesAreReportedWithTheValueAsWritten(String setting) {
        InvalidHtsPropertyException ex = invalid(start(null, setting));
        assertThat(ex.property()).isEqualTo("hts.scheduler.stall-timeout");
        assertThat(String.valueOf(ex.value())).as(setting).isEqualTo("-1s");
    }

    @Test
    void environmentVariablesAreReportedWithTheValueAsWritten() {
        InvalidHtsPropertyException ex = invalid(start(env(Map.of("HTS_SCHEDULER_STALLTIMEOUT", "-1s"))));
        assertThat(ex.property()).isEqualTo("hts.scheduler.stall-timeout");
        assertThat(String.valueOf(ex.value())).isEqualTo("-1s");
        InvalidHtsPropertyException devices = invalid(start(env(Map.of("HTS_GPU_DEVICES", "0,0"))));
        assertThat(devices.property()).isEqualTo("hts.gpu.devices");
        assertThat(String.valueOf(devices.value())).isEqualTo("0,0");
    }

    @Test
    void lazyInitializationDoesNotLetABadValueThrough() {
        Throwable t = catchThrowable(() -> new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "spring.main.banner-mode=off", "spring.main.lazy-initialization=true", "hts.executor.threads=0")
                .run()
                .close());
        assertThat(t)
                .as("start-up with an invalid hts.executor.threads and lazy initialization")
                .isNotNull();
        assertThat(invalid(t).property()).isEqualTo("hts.executor.threads");
    }

    @Test
    void anUnknownFailureModeGetsHtsReport(CapturedOutput output) {
        start(null, "hts.scheduler.failure-mode=abort");
        assertThat(output)
                .contains("Invalid value 'abort' for property 'hts.scheduler.failure-mode'")
                .contains("fail-fast, continue")
                .doesNotContain("FAIL_FAST");
    }

    @Test
    void anUnknownGpuEnablementGetsHtsReport(CapturedOutput output) {
        start(null, "hts.gpu.enabled=maybe");
        assertThat(output)
                .contains("Invalid value 'maybe' for property 'hts.gpu.enabled'")
                .contains("auto, true, false")
                .doesNotContain("[AUTO, TRUE, FALSE]");
    }

    @Test
    void anUnknownWhenOpenAndMemoryShortageGetHtsReport(CapturedOutput output) {
        start(null, "hts.gpu.circuit-breaker.when-open=later");
        assertThat(output)
                .contains("Invalid value 'later' for property 'hts.gpu.circuit-breaker.when-open'")
                .contains("wait, fail");
        start(null, "hts.scheduler.memory-shortage=panic");
        assertThat(output)
                .contains("Invalid value 'panic' for property 'hts.scheduler.memory-shortage'")
                .contains("run-on-cpu");
    }

    @Test
    void aMalformedSizeGetsHtsReport(CapturedOutput output) {
        start(null, "hts.profiling.retained-size=64 megabytes");
        assertThat(output)
                .contains("Invalid value '64 megabytes' for property 'hts.profiling.retained-size'")
                .contains("a size such as");
    }

    @Test
    void anUnknownPolicyFromAnEnvironmentVariableGetsHtsReport(CapturedOutput output) {
        start(env(Map.of("HTS_SCHEDULER_POLICY", "fastest")));
        assertThat(output)
                .contains("Invalid value 'fastest' for property 'hts.scheduler.policy'")
                .contains("round-robin")
                .doesNotContain("ROUND_ROBIN");
    }

    @Test
    void aMalformedDurationFromAnEnvironmentVariableGetsHtsReport(CapturedOutput output) {
        start(env(Map.of("HTS_TASKS_DEFAULTTIMEOUT", "5 seconds")));
        assertThat(output)
                .contains("Invalid value '5 seconds' for property 'hts.tasks.default-timeout'")
                .contains("500ms");
    }

    @Test
    void aNanThresholdIsRefused() {
        refusedByRunner(
                "hts.gpu.circuit-breaker.failure-rate-threshold=NaN",
                "hts.gpu.circuit-breaker.failure-rate-threshold",
                "NaN");
    }

    // ================================================================== @HtsTask wiring

    static class NegativePriority {

        @HtsTask(graph = "prio", priority = -1)
        int a() {
            return 1;
        }
    }

    static class NegativeTimeout {

        @HtsTask(graph = "negto", timeout = "-5s")
        int a() {
            return 1;
        }
    }

    static class ZeroTimeout {

        @HtsTask(graph = "zeroto", timeout = "0ms")
        int a() {
            return 1;
        }
    }

    static class TooManyRetries {

        @HtsTask(graph = "retr", retries = Integer.MAX_VALUE)
        int a() {
            return 1;
        }
    }

    static class DuplicateAfter {

        @HtsTask(graph = "dup")
        int a() {
            return 1;
        }

        @HtsTask(
                graph = "dup",
                after = {"a", "a"})
        int b(int x, int y) {
            return x + y;
        }
    }

    static class DuplicateWaitsFor {

        @HtsTask(graph = "dupw")
        int a() {
            return 1;
        }

        @HtsTask(
                graph = "dupw",
                waitsFor = {"a", "a"})
        int b() {
            return 2;
        }
    }

    static class WaitsForItself {

        @HtsTask(graph = "selfw", waitsFor = "b")
        int b() {
            return 2;
        }
    }

    static class TooFewParameters {

        @HtsTask(graph = "few")
        int a() {
            return 1;
        }

        @HtsTask(graph = "few")
        int c() {
            return 1;
        }

        @HtsTask(
                graph = "few",
                after = {"a", "c"})
        int b(int x) {
            return x;
        }
    }

    private void failsNaming(Class<?> config, String method) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class))
                .withUserConfiguration(config)
                .run(context -> {
                    assertThat(context).as(config.getSimpleName()).hasFailed();
                    List<String> messages = new ArrayList<>();
                    for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                        messages.add(String.valueOf(t.getMessage()));
                    }
                    assertThat(String.join(" | ", messages))
                            .as("the start-up failure names the method")
                            .contains(method);
                });
    }

    /** Either it works (both parameters get a's result) or start-up fails naming the method. */
    private void worksOrFailsNaming(Class<?> config, String method) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class))
                .withUserConfiguration(config)
                .run(context -> {
                    if (context.getStartupFailure() != null) {
                        List<String> messages = new ArrayList<>();
                        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                            messages.add(String.valueOf(t.getMessage()));
                        }
                        assertThat(String.join(" | ", messages))
                                .as("the start-up failure names the method")
                                .contains(method);
                        return;
                    }
                    Scheduler s = context.getBean(Scheduler.class);
                    TaskGraph g = s.registeredGraphs().values().iterator().next();
                    assertThat(s.submit(g)
                                    .await(Duration.ofSeconds(20))
                                    .status()
                                    .name())
                            .isEqualTo("SUCCEEDED");
                });
    }

    @Test
    void aNegativePriorityFailsStartUpNamingTheMethod() {
        failsNaming(NegativePriority.class, "NegativePriority.a()");
    }

    @Test
    void aNegativeTimeoutFailsStartUpNamingTheMethod() {
        failsNaming(NegativeTimeout.class, "NegativeTimeout.a()");
    }

    @Test
    void aZeroTimeoutFailsStartUpNamingTheMethod() {
        failsNaming(ZeroTimeout.class, "ZeroTimeout.a()");
    }

    @Test
    void tooManyRetriesFailsStartUpNamingTheMethod() {
        failsNaming(TooManyRetries.class, "TooManyRetries.a()");
    }

    @Test
    void tooFewParametersAndSelfWaitFailNamingTheMethod() {
        failsNaming(TooFewParameters.class, "TooFewParameters.b(int)");
        failsNaming(WaitsForItself.class, "WaitsForItself.b()");
    }

    @Test
    void duplicateNamesInAfterOrWaitsForWorkOrFailNamingTheMethod() {
        worksOrFailsNaming(DuplicateAfter.class, "DuplicateAfter.b(int, int)");
        worksOrFailsNaming(DuplicateWaitsFor.class, "DuplicateWaitsFor.b()");
    }

    // ================================================================== graceful shutdown

    @Test
    void theShutdownWarningEchoesASubSecondPhaseAsConfigured(CapturedOutput output) throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        GraphRun[] run = new GraphRun[1];
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class))
                .withPropertyValues("spring.lifecycle.timeout-per-shutdown-phase=700ms")
                .run(context -> {
                    TaskGraph g = TaskGraph.named("stuck700");
                    g.task("blocked").cpu(ctx -> {
                        started.countDown();
                        new CountDownLatch(1).await(20, TimeUnit.SECONDS);
                        return 0;
                    });
                    run[0] = context.getBean(Scheduler.class).submit(g);
                    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                });
        assertThat(output)
                .contains("spring.lifecycle.timeout-per-shutdown-phase=700ms, less 350ms kept")
                .contains("run " + run[0].runId() + " of graph 'stuck700'");
    }
}
