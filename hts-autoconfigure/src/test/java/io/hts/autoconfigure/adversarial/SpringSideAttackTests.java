package io.hts.autoconfigure.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration;
import io.github.resilience4j.springboot.timelimiter.autoconfigure.TimeLimiterAutoConfiguration;
import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.autoconfigure.HtsProperties;
import io.hts.autoconfigure.InvalidHtsPropertyException;
import io.hts.autoconfigure.SchedulerBuilderCustomizer;
import io.hts.autoconfigure.health.HtsHealthContributorAutoConfiguration;
import io.hts.autoconfigure.health.HtsHealthIndicator;
import io.hts.autoconfigure.metrics.HtsGpuMetrics;
import io.hts.autoconfigure.metrics.HtsMetrics;
import io.hts.autoconfigure.metrics.HtsMetricsAutoConfiguration;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.autoconfigure.support.SimulatedGpuConfiguration;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.internal.FaultResolution;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.policy.CpuFirstPolicy;
import io.hts.engine.policy.RoundRobinPolicy;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import tools.jackson.databind.JsonNode;

/**
 * A demanding Spring Boot user's attacks on the recent starter changes: SchedulerBuilderCustomizer
 * beans, the moved {@code hts} health contributor, {@code hts.metrics.enabled} and
 * {@code hts.tasks.default-backoff} for {@code retries(n)}.
 */
class SpringSideAttackTests {

    private final ApplicationContextRunner hts =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class));

    private final ApplicationContextRunner withHealth = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(HtsAutoConfiguration.class, HtsHealthContributorAutoConfiguration.class));

    private final ApplicationContextRunner withMeters = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    MetricsAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class,
                    HtsAutoConfiguration.class,
                    HtsMetricsAutoConfiguration.class));

    /** Every message of a failure's chain, joined: what a user reads in the start-up report. */
    private static String messages(Throwable failure) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t.getClass().getName())
                    .append(": ")
                    .append(t.getMessage())
                    .append('\n');
        }
        return all.toString();
    }

    private static TaskGraph oneTask(String name) {
        TaskGraph g = TaskGraph.named(name);
        g.task("a").cpu(ctx -> 1);
        return g;
    }

    // ---------------------------------------------------------------- SchedulerBuilderCustomizer

    @Test
    void aCustomizersPolicyWinsOverThePolicyBeanAndTheProperty() {
        hts.withPropertyValues("hts.scheduler.policy=round-robin")
                .withBean(SchedulingPolicy.class, RoundRobinPolicy::new)
                .withBean(SchedulerBuilderCustomizer.class, () -> b -> b.policy(new CpuFirstPolicy()))
                .run(context ->
                        assertThat(context.getBean(Scheduler.class).policy()).isInstanceOf(CpuFirstPolicy.class));
    }

    @Test
    void aListenerAddedByACustomizerAndAListenerBeanBothHearEveryRunOnce() {
        List<String> heard = new CopyOnWriteArrayList<>();
        CountDownLatch both = new CountDownLatch(2);
        hts.withBean("beanListener", TaskListener.class, () -> listener("bean", heard, both))
                .withBean(SchedulerBuilderCustomizer.class, () -> b -> b.listener(listener("customizer", heard, both)))
                .run(context -> {
                    context.getBean(Scheduler.class).execute(oneTask("heard"));
                    assertThat(both.await(10, TimeUnit.SECONDS)).isTrue();
                    assertThat(heard).containsExactlyInAnyOrder("bean", "customizer");
                });
    }

    private static TaskListener listener(String who, List<String> heard, CountDownLatch latch) {
        return new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {}

            @Override
            public void onRunFinished(RunProfile profile) {
                heard.add(who);
                latch.countDown();
            }
        };
    }

    @Test
    void aCustomizerSettingZeroThreadsFailsWithAMessageSayingWhatWasWrong() {
        hts.withBean("zeroThreads", SchedulerBuilderCustomizer.class, () -> b -> b.threads(0))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("threads")
                            .hasMessageContaining("was 0");
                });
        hts.withBean("negativeThreads", SchedulerBuilderCustomizer.class, () -> b -> b.threads(-4))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining("threads")
                            .hasMessageContaining("was -4");
                });
    }

    /**
     * The Javadoc: "A customizer that throws fails the context's start, naming it." The user never set
     * hts.executor.threads; the report must lead to the customizer, not only to htsScheduler.
     */
    @Test
    void aCustomizerThatThrowsIsNamedInTheStartFailure() {
        hts.withBean("zeroThreadsCustomizer", SchedulerBuilderCustomizer.class, () -> b -> b.threads(0))
                .run(context ->
                        assertThat(messages(context.getStartupFailure())).contains("zeroThreadsCustomizer"));
        hts.withBean("brokenCustomizer", SchedulerBuilderCustomizer.class, () -> b -> {
                    throw new IllegalStateException("boom");
                })
                .run(context -> assertThat(messages(context.getStartupFailure()))
                        .contains("brokenCustomizer")
                        .contains("boom"));
    }

    @Test
    void anInvalidHtsPropertyStillFailsWithItsOwnReportEvenIfACustomizerWouldOverrideIt() {
        hts.withPropertyValues("hts.executor.threads=0")
                .withBean(SchedulerBuilderCustomizer.class, () -> b -> b.threads(2))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(InvalidHtsPropertyException.class)
                            .hasMessageContaining("hts.executor.threads");
                });
    }

    @Test
    void lambdasClassesOrderedAndEqualOrdersAreAllAppliedOnceInOrder() {
        hts.withUserConfiguration(MixedCustomizers.class).run(context -> {
            assertThat(context).hasNotFailed();
            @SuppressWarnings("unchecked")
            List<String> applied = context.getBean("applied", List.class);
            assertThat(applied)
                    .hasSize(5)
                    .startsWith("ordered-class(-10)", "lambda(0)")
                    .endsWith("annotated-class(50)");
            assertThat(applied.subList(2, 4)).containsExactlyInAnyOrder("same-a(10)", "same-b(10)");
            assertThat(context.getBean(Scheduler.class).parallelism())
                    .as("annotated-class(50) ran last")
                    .isEqualTo(3);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class MixedCustomizers {

        @Bean
        List<String> applied() {
            return Collections.synchronizedList(new ArrayList<>());
        }

        @Bean
        AnnotatedCustomizer annotated(List<String> applied) {
            return new AnnotatedCustomizer(applied);
        }

        @Bean
        @Order(10)
        SchedulerBuilderCustomizer sameA(List<String> applied) {
            return b -> {
                applied.add("same-a(10)");
                b.threads(1);
            };
        }

        @Bean
        @Order(0)
        SchedulerBuilderCustomizer lambda(List<String> applied) {
            return b -> applied.add("lambda(0)");
        }

        @Bean
        @Order(10)
        SchedulerBuilderCustomizer sameB(List<String> applied) {
            return b -> {
                applied.add("same-b(10)");
                b.threads(2);
            };
        }

        @Bean
        OrderedCustomizer ordered(List<String> applied) {
            return new OrderedCustomizer(applied);
        }
    }

    @Order(50)
    static final class AnnotatedCustomizer implements SchedulerBuilderCustomizer {
        private final List<String> applied;

        AnnotatedCustomizer(List<String> applied) {
            this.applied = applied;
        }

        @Override
        public void customize(io.hts.engine.run.SchedulerBuilder builder) {
            applied.add("annotated-class(50)");
            builder.threads(3);
        }
    }

    static final class OrderedCustomizer implements SchedulerBuilderCustomizer, Ordered {
        private final List<String> applied;

        OrderedCustomizer(List<String> applied) {
            this.applied = applied;
        }

        @Override
        public void customize(io.hts.engine.run.SchedulerBuilder builder) {
            applied.add("ordered-class(-10)");
        }

        @Override
        public int getOrder() {
            return -10;
        }
    }

    @Test
    void aCustomizerThatCallsBuildItselfDoesNotBecomeTheContextsScheduler() {
        AtomicReference<Scheduler> rogue = new AtomicReference<>();
        AtomicInteger calls = new AtomicInteger();
        try {
            hts.withPropertyValues("hts.executor.threads=1")
                    .withBean(SchedulerBuilderCustomizer.class, () -> b -> {
                        calls.incrementAndGet();
                        rogue.set(b.threads(2).build());
                    })
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        Scheduler s = context.getBean(Scheduler.class);
                        assertThat(calls).hasValue(1);
                        assertThat(s).isNotSameAs(rogue.get());
                        assertThat(s.parallelism()).isEqualTo(2);
                        assertThat(s.execute(oneTask("after-rogue-build")).isDone())
                                .isTrue();
                    });
        } finally {
            if (rogue.get() != null) {
                rogue.get().close();
            }
        }
    }

    @Test
    void theApplicationsOwnSchedulerIsNotCustomizedButHasHealth() {
        List<String> applied = new CopyOnWriteArrayList<>();
        withHealth
                .withBean(Scheduler.class, () -> Scheduler.builder().threads(1).build())
                .withBean(SchedulerBuilderCustomizer.class, () -> b -> applied.add("x"))
                .run(context -> {
                    assertThat(applied).isEmpty();
                    Health health = context.getBean("htsHealthIndicator", HealthIndicator.class)
                            .health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails()).containsEntry("workers", 1);
                });
    }

    // ---------------------------------------------------------------- health

    @Test
    void healthIsDownAfterTheContextClosesAndNeverThrows() {
        AtomicReference<HealthIndicator> indicator = new AtomicReference<>();
        withHealth.run(context -> {
            indicator.set(context.getBean("htsHealthIndicator", HealthIndicator.class));
            assertThat(indicator.get().health().getStatus()).isEqualTo(Status.UP);
        });
        assertThat(indicator.get().health().getStatus()).isEqualTo(Status.DOWN);
    }

    @Test
    void healthDefaultsDisabledTurnsHtsOffUnlessItIsEnabledByName() {
        withHealth
                .withPropertyValues("management.health.defaults.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("htsHealthIndicator"));
        withHealth
                .withPropertyValues("management.health.defaults.enabled=false", "management.health.hts.enabled=true")
                .run(context -> assertThat(context).hasSingleBean(HtsHealthIndicator.class));
    }

    @Test
    void aGpuBehindAnOpenBreakerWithResilience4jLeavesHtsUp() {
        withHealth
                .withConfiguration(AutoConfigurations.of(CircuitBreakerAutoConfiguration.class))
                .withBean(DeviceBackend.class, () -> new FakeGpuBackend(1))
                .run(context -> {
                    var breaker = ((io.hts.engine.fault.CircuitBreakingBackend)
                                    context.getBean(Scheduler.class).gpu().orElseThrow())
                            .circuitBreaker();
                    breaker.transitionToOpenState();
                    Health h = context.getBean("htsHealthIndicator", HealthIndicator.class)
                            .health();
                    assertThat(h.getStatus()).isEqualTo(Status.UP);
                    assertThat(h.getDetails().get("gpu"))
                            .asString()
                            .startsWith("DOWN: circuit breaker 'hts-gpu' is OPEN");
                });
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        TaskGraph features() {
            return oneTask("features");
        }
    }

    private static ConfigurableApplicationContext start(String... properties) {
        return LocalHttp.server(App.class)
                .properties("hts.executor.threads=2")
                .properties(properties)
                .run();
    }

    @Test
    void overHttpHtsIsUpWithDetailsInAGroupAndDownWith503AfterTheSchedulerShutsDown() throws Exception {
        try (ConfigurableApplicationContext app = start(
                "management.endpoint.health.show-details=always",
                "management.endpoint.health.group.work.include=hts",
                "management.endpoint.health.group.work.show-details=always")) {
            HttpResponse<String> all = LocalHttp.get(app, "/actuator/health");
            assertThat(all.statusCode()).as(all.body()).isEqualTo(200);
            JsonNode htsNode = LocalHttp.json(all).path("components").path("hts");
            assertThat(htsNode.path("status").asString()).isEqualTo("UP");
            assertThat(htsNode.path("details").path("workers").asInt()).isEqualTo(2);
            assertThat(htsNode.path("details").path("cpu").asString()).isEqualTo("UP");

            HttpResponse<String> one = LocalHttp.get(app, "/actuator/health/hts");
            assertThat(one.statusCode()).as(one.body()).isEqualTo(200);
            assertThat(LocalHttp.json(one).path("details").path("activeRuns").asInt())
                    .isZero();

            HttpResponse<String> group = LocalHttp.get(app, "/actuator/health/work");
            assertThat(group.statusCode()).as(group.body()).isEqualTo(200);
            assertThat(LocalHttp.json(group)
                            .path("components")
                            .path("hts")
                            .path("status")
                            .asString())
                    .isEqualTo("UP");

            app.getBean(Scheduler.class).shutdown();
            HttpResponse<String> down = LocalHttp.get(app, "/actuator/health");
            assertThat(down.statusCode()).as(down.body()).isEqualTo(503);
            assertThat(LocalHttp.json(down)
                            .path("components")
                            .path("hts")
                            .path("status")
                            .asString())
                    .isEqualTo("DOWN");
            HttpResponse<String> groupDown = LocalHttp.get(app, "/actuator/health/work");
            assertThat(groupDown.statusCode()).as(groupDown.body()).isEqualTo(503);
        }
    }

    @Test
    void overHttpShowDetailsNeverHidesTheDetailsAndDisabledRemovesTheComponent() throws Exception {
        try (ConfigurableApplicationContext app = start(
                "management.endpoint.health.show-components=always",
                "management.endpoint.health.show-details=never",
                "hts.metrics.enabled=false")) {
            HttpResponse<String> all = LocalHttp.get(app, "/actuator/health");
            assertThat(all.statusCode()).as(all.body()).isEqualTo(200);
            JsonNode htsNode = LocalHttp.json(all).path("components").path("hts");
            assertThat(htsNode.path("status").asString()).as(all.body()).isEqualTo("UP");
            assertThat(htsNode.has("details")).as(all.body()).isFalse();

            MeterRegistry registry = app.getBean(MeterRegistry.class);
            assertThat(registry.getMeters())
                    .extracting(m -> m.getId().getName())
                    .noneMatch(n -> n.startsWith("hts.runs")
                            || n.startsWith("hts.tasks")
                            || n.startsWith("hts.executor")
                            || n.startsWith("hts.queue")
                            || n.startsWith("hts.gpu"));
        }
        try (ConfigurableApplicationContext app =
                start("management.endpoint.health.show-components=always", "management.health.hts.enabled=false")) {
            HttpResponse<String> all = LocalHttp.get(app, "/actuator/health");
            assertThat(all.statusCode()).isEqualTo(200);
            assertThat(LocalHttp.json(all).path("components").has("hts"))
                    .as(all.body())
                    .isFalse();
            assertThat(app.getBean(MeterRegistry.class)
                            .find("hts.executor.idle")
                            .gauge())
                    .as("metrics on by default in the full application")
                    .isNotNull();
        }
    }

    // ---------------------------------------------------------------- metrics

    @Test
    void metricsOffWithARegistryRegisterNoHtsMeterAndTheSchedulerRuns() {
        withMeters.withPropertyValues("hts.metrics.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(HtsMetrics.class);
            context.getBean(Scheduler.class).execute(oneTask("unmeasured"));
            assertThat(context.getBean(MeterRegistry.class).getMeters())
                    .extracting(Meter::getId)
                    .extracting(Meter.Id::getName)
                    .noneMatch(n -> n.startsWith("hts."));
        });
        withMeters.run(context -> {
            context.getBean(Scheduler.class).execute(oneTask("measured"));
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            await().atMost(Duration.ofSeconds(10))
                    .until(() ->
                            registry.find("hts.runs").tag("graph", "measured").timer() != null);
        });
    }

    @Test
    void metricsOffWithoutARegistryAndOnWithoutARegistryBothStart() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class, HtsMetricsAutoConfiguration.class))
                .withPropertyValues("hts.metrics.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(HtsMetrics.class));
    }

    @Test
    void gpuGaugesFollowTheSwitch() {
        withMeters.withUserConfiguration(SimulatedGpuConfiguration.class).run(context -> {
            assertThat(context).hasSingleBean(HtsGpuMetrics.class);
            assertThat(context.getBean(MeterRegistry.class)
                            .find("hts.gpu.memory.reserved")
                            .tag("device", "cuda:0")
                            .gauge())
                    .isNotNull();
        });
        withMeters
                .withUserConfiguration(SimulatedGpuConfiguration.class)
                .withPropertyValues("hts.metrics.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(HtsGpuMetrics.class);
                    assertThat(context.getBean(MeterRegistry.class)
                                    .find("hts.gpu.memory.reserved")
                                    .gauge())
                            .isNull();
                    assertThat(context.getBean(Scheduler.class).gpu())
                            .as("the GPU itself still runs")
                            .isPresent();
                });
    }

    /**
     * hts.metrics.enabled is a boolean property (HtsProperties.Metrics): what it binds to and what
     * it does must agree, whatever spelling Spring's conversion accepts.
     */
    @ParameterizedTest(name = "hts.metrics.enabled=''{0}''")
    @CsvSource({"TRUE", "True", "true", "false", "FALSE", "yes", "on", "1", "no", "off", "0"})
    void theMetricsSwitchDoesWhatItsBoundValueSays(String value) {
        withMeters.withPropertyValues("hts.metrics.enabled=" + value).run(context -> {
            assertThat(context).hasNotFailed();
            boolean bound = context.getBean(HtsProperties.class).getMetrics().isEnabled();
            assertThat(context.containsBean("htsMetrics"))
                    .as("hts.metrics.enabled='%s' binds to %s; the meters must follow", value, bound)
                    .isEqualTo(bound);
        });
    }

    @ParameterizedTest(name = "hts.metrics.enabled=''{0}''")
    @CsvSource(
            value = {"''", "maybe"},
            quoteCharacter = '\'')
    void aMetricsSwitchThatIsNoBooleanFailsTheStartNamingTheProperty(String value) {
        withMeters
                .withPropertyValues("hts.metrics.enabled=" + (value == null ? "" : value))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(messages(context.getStartupFailure())).contains("hts.metrics.enabled");
                });
    }

    // ---------------------------------------------------------------- default-backoff

    private static long backoff(Scheduler s, Task<?> task, Device device, int attempt) {
        return new FaultResolution(s.faultTolerance())
                .retryFor(task, device)
                .getRetryConfig()
                .getIntervalBiFunction()
                .apply(attempt, null);
    }

    @Test
    void defaultBackoffAppliesToRetriesWithoutResilience4jOnCpuAndGpu() {
        hts.withPropertyValues("hts.tasks.default-backoff=321ms").run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            TaskGraph g = TaskGraph.named("g");
            Task<Integer> counted = g.task("counted").retries(3).cpu(ctx -> 1);
            for (int attempt = 1; attempt <= 3; attempt++) {
                assertThat(backoff(s, counted, Device.CPU, attempt)).isEqualTo(321L);
                assertThat(backoff(s, counted, Device.GPU, attempt)).isEqualTo(321L);
            }
        });
    }

    @Test
    void defaultBackoffZeroMeansNoWaitAndARetriedTaskSucceeds() {
        hts.withPropertyValues("hts.tasks.default-backoff=0ms").run(context -> {
            AtomicInteger attempts = new AtomicInteger();
            TaskGraph g = TaskGraph.named("flaky");
            Task<Integer> t = g.task("flaky").retries(2).cpu(ctx -> {
                if (attempts.incrementAndGet() < 3) {
                    throw new IllegalStateException("not yet");
                }
                return 7;
            });
            Scheduler s = context.getBean(Scheduler.class);
            assertThat(backoff(s, t, Device.CPU, 1)).isZero();
            assertThat(s.execute(g).result(t)).isEqualTo(7);
            assertThat(attempts).hasValue(3);
        });
    }

    @Test
    void aHugeDefaultBackoffReallyHoldsTheRetryBack() {
        hts.withPropertyValues("hts.tasks.default-backoff=3650d").run(context -> {
            AtomicInteger attempts = new AtomicInteger();
            CountDownLatch first = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("held");
            g.task("held").retries(1).cpu(ctx -> {
                attempts.incrementAndGet();
                first.countDown();
                throw new IllegalStateException("fail");
            });
            var run = context.getBean(Scheduler.class).submit(g);
            assertThat(first.await(10, TimeUnit.SECONDS)).isTrue();
            await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(2)).until(() -> attempts.get() == 1);
            assertThat(run.isDone()).isFalse();
            run.cancel();
        });
    }

    private final ApplicationContextRunner withResilience4j = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    RetryAutoConfiguration.class, TimeLimiterAutoConfiguration.class, HtsAutoConfiguration.class));

    @Test
    void withResilience4jNamedInstancesKeepTheirOwnWaitAndRetriesNUseTheDefaultBackoff() {
        withResilience4j
                .withPropertyValues(
                        "hts.tasks.default-backoff=250ms",
                        "hts.tasks.default-retries=2",
                        "resilience4j.retry.instances.fast.max-attempts=3",
                        "resilience4j.retry.instances.fast.wait-duration=7ms",
                        "resilience4j.retry.instances.hts-cpu.max-attempts=2",
                        "resilience4j.retry.instances.hts-cpu.wait-duration=11ms")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    TaskGraph g = TaskGraph.named("g");
                    Task<Integer> counted = g.task("counted").retries(2).cpu(ctx -> 1);
                    Task<Integer> named = g.task("named").retry("fast").cpu(ctx -> 1);
                    Task<Integer> undeclared = g.task("undeclared").cpu(ctx -> 1);
                    assertThat(backoff(s, counted, Device.CPU, 1)).isEqualTo(250L);
                    assertThat(backoff(s, named, Device.CPU, 1)).isEqualTo(7L);
                    assertThat(backoff(s, undeclared, Device.CPU, 1))
                            .as("hts-cpu instance")
                            .isEqualTo(11L);
                    assertThat(new FaultResolution(s.faultTolerance())
                                    .retryFor(undeclared)
                                    .getRetryConfig()
                                    .getMaxAttempts())
                            .isEqualTo(2);
                    assertThat(backoff(s, undeclared, Device.GPU, 1))
                            .as("no hts-gpu: hts.tasks.default-*")
                            .isEqualTo(250L);
                    assertThat(new FaultResolution(s.faultTolerance())
                                    .retryFor(undeclared, Device.GPU)
                                    .getRetryConfig()
                                    .getMaxAttempts())
                            .isEqualTo(3);
                });
    }

    @Test
    void withResilience4jButNoInstancesDefaultRetriesAndRetriesNBothUseTheDefaultBackoff() {
        withResilience4j
                .withPropertyValues("hts.tasks.default-backoff=42ms", "hts.tasks.default-retries=1")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    TaskGraph g = TaskGraph.named("g");
                    Task<Integer> counted = g.task("counted").retries(4).cpu(ctx -> 1);
                    Task<Integer> undeclared = g.task("undeclared").cpu(ctx -> 1);
                    assertThat(backoff(s, counted, Device.CPU, 4)).isEqualTo(42L);
                    assertThat(backoff(s, undeclared, Device.CPU, 1)).isEqualTo(42L);
                    assertThat(new FaultResolution(s.faultTolerance())
                                    .retryFor(counted)
                                    .getRetryConfig()
                                    .getMaxAttempts())
                            .isEqualTo(5);
                });
    }

    @Test
    void aNegativeOrTooLongDefaultBackoffIsRefusedNamingTheProperty() {
        hts.withPropertyValues("hts.tasks.default-backoff=-5ms")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .isInstanceOf(InvalidHtsPropertyException.class)
                        .hasMessageContaining("hts.tasks.default-backoff")
                        .hasMessageContaining("-5ms"));
        hts.withPropertyValues("hts.tasks.default-backoff=36526d")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .isInstanceOf(InvalidHtsPropertyException.class)
                        .hasMessageContaining("hts.tasks.default-backoff"));
    }
}
