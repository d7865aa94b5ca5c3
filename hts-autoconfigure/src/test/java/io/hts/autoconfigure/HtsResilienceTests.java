package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration;
import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration;
import io.github.resilience4j.springboot.timelimiter.autoconfigure.TimeLimiterAutoConfiguration;
import io.hts.autoconfigure.health.HtsHealthIndicator;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.fault.internal.FaultResolution;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Resilience4j through resilience4j-spring-boot4: the hts-cpu and hts-gpu instances, the GPU's circuit breaker. */
class HtsResilienceTests {

    private final ApplicationContextRunner withResilience4j = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    RetryAutoConfiguration.class,
                    TimeLimiterAutoConfiguration.class,
                    CircuitBreakerAutoConfiguration.class,
                    BulkheadAutoConfiguration.class,
                    HtsAutoConfiguration.class))
            .withUserConfiguration(Gpu.class);

    private final ApplicationContextRunner withoutResilience4j = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class))
            .withUserConfiguration(Gpu.class);

    private static TaskGraph failingOnBoth(AtomicInteger cpu, AtomicInteger gpu) {
        TaskGraph g = TaskGraph.named("failing");
        g.task("on-cpu").cpu(ctx -> {
            cpu.incrementAndGet();
            throw new IllegalStateException("cpu");
        });
        g.task("on-gpu").gpu(ctx -> {
            gpu.incrementAndGet();
            throw new IllegalStateException("gpu");
        });
        return g;
    }

    @Test
    void resilience4jPropertiesConfigureTheRetriesOfCpuAndGpuAttempts() {
        withResilience4j
                .withPropertyValues(
                        "resilience4j.retry.instances.hts-cpu.max-attempts=2",
                        "resilience4j.retry.instances.hts-cpu.wait-duration=1ms",
                        "resilience4j.retry.instances.hts-gpu.max-attempts=4",
                        "resilience4j.retry.instances.hts-gpu.wait-duration=1ms",
                        "hts.tasks.default-retries=7")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RetryRegistry.class);
                    Scheduler s = context.getBean(Scheduler.class);
                    AtomicInteger cpu = new AtomicInteger();
                    AtomicInteger gpu = new AtomicInteger();
                    assertThatThrownBy(() -> s.submit(
                                            failingOnBoth(cpu, gpu), RunOptions.failureMode(FailureMode.CONTINUE))
                                    .await())
                            .isInstanceOf(GraphRunException.class);
                    assertThat(cpu)
                            .as("resilience4j.retry.instances.hts-cpu.max-attempts")
                            .hasValue(2);
                    assertThat(gpu)
                            .as("resilience4j.retry.instances.hts-gpu.max-attempts")
                            .hasValue(4);
                });
    }

    @Test
    void withoutAnHtsInstanceTheHtsDefaultsApply() {
        withResilience4j
                .withPropertyValues(
                        "resilience4j.retry.instances.hts-gpu.max-attempts=3",
                        "resilience4j.retry.instances.hts-gpu.wait-duration=1ms",
                        "hts.tasks.default-retries=1",
                        "hts.tasks.default-backoff=1ms")
                .run(context -> {
                    AtomicInteger cpu = new AtomicInteger();
                    AtomicInteger gpu = new AtomicInteger();
                    assertThatThrownBy(() -> context.getBean(Scheduler.class)
                                    .submit(failingOnBoth(cpu, gpu), RunOptions.failureMode(FailureMode.CONTINUE))
                                    .await())
                            .isInstanceOf(GraphRunException.class);
                    assertThat(cpu).as("hts.tasks.default-retries=1").hasValue(2);
                    assertThat(gpu).hasValue(3);
                });
    }

    @Test
    void theDefaultBackoffAlsoAppliesToTasksThatDeclareARetryCountWithoutOne() {
        withResilience4j.withPropertyValues("hts.tasks.default-backoff=750ms").run(context -> {
            TaskGraph g = TaskGraph.named("declares-retries");
            Task<Integer> counted = g.task("counted").retries(2).cpu(ctx -> 1);
            Task<Integer> own = g.task("own").retries(2, Duration.ofMillis(5)).cpu(ctx -> 1);
            FaultResolution resolution =
                    new FaultResolution(context.getBean(Scheduler.class).faultTolerance());
            for (int attempt = 1; attempt <= 2; attempt++) {
                assertThat(resolution
                                .retryFor(counted)
                                .getRetryConfig()
                                .getIntervalBiFunction()
                                .apply(attempt, null))
                        .as("hts.tasks.default-backoff before retry %d", attempt)
                        .isEqualTo(750L);
                assertThat(resolution
                                .retryFor(own)
                                .getRetryConfig()
                                .getIntervalBiFunction()
                                .apply(attempt, null))
                        .as("the task's own backoff wins")
                        .isEqualTo(5L);
            }
        });
    }

    @Test
    void theGpuBackendIsBehindTheApplicationsHtsGpuCircuitBreakerAndItsStateShowsInHealth() {
        withResilience4j
                .withPropertyValues(
                        "resilience4j.circuitbreaker.instances.hts-gpu.sliding-window-size=2",
                        "resilience4j.circuitbreaker.instances.hts-gpu.minimum-number-of-calls=2",
                        "resilience4j.bulkhead.instances.hts-gpu.max-concurrent-calls=3")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    CircuitBreakingBackend gpu =
                            (CircuitBreakingBackend) s.gpu().orElseThrow();
                    assertThat(gpu.delegate()).isSameAs(context.getBean(DeviceBackend.class));
                    assertThat(gpu.circuitBreaker())
                            .isSameAs(context.getBean(CircuitBreakerRegistry.class)
                                    .find("hts-gpu")
                                    .orElseThrow());
                    assertThat(gpu.bulkhead())
                            .get()
                            .isSameAs(context.getBean(BulkheadRegistry.class)
                                    .find("hts-gpu")
                                    .orElseThrow());
                    AtomicInteger attempts = new AtomicInteger();
                    TaskGraph g = TaskGraph.named("broken-gpu");
                    g.group(
                            "k",
                            2,
                            (i, t) -> t.gpu(ctx -> {
                                attempts.incrementAndGet();
                                throw new IllegalStateException("kernel failed");
                            }));
                    assertThatThrownBy(() -> s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE))
                                    .await())
                            .isInstanceOf(GraphRunException.class);
                    assertThat(gpu.circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.OPEN);
                    assertThat(new HtsHealthIndicator(s).health().getDetails().get("gpu"))
                            .asString()
                            .startsWith("DOWN: circuit breaker 'hts-gpu' is OPEN");
                });
    }

    @Test
    void withoutRegistriesAPrivateBreakerFollowsHtsPropertiesAndNoRegistryBeanIsCreated() {
        withoutResilience4j
                .withPropertyValues(
                        "hts.gpu.circuit-breaker.sliding-window-size=3", "hts.gpu.circuit-breaker.when-open=wait")
                .run(context -> {
                    assertThat(context)
                            .doesNotHaveBean(CircuitBreakerRegistry.class)
                            .doesNotHaveBean(BulkheadRegistry.class)
                            .doesNotHaveBean(RetryRegistry.class);
                    CircuitBreakingBackend gpu = (CircuitBreakingBackend)
                            context.getBean(Scheduler.class).gpu().orElseThrow();
                    assertThat(gpu.circuitBreaker().getName()).isEqualTo("hts-gpu");
                    assertThat(gpu.circuitBreaker().getCircuitBreakerConfig().getSlidingWindowSize())
                            .isEqualTo(3);
                    assertThat(gpu.whenOpen()).isEqualTo(CircuitBreakingBackend.WhenOpen.WAIT);
                    assertThat(gpu.bulkhead()).isEmpty();
                });
    }

    @Test
    void theCircuitBreakerCanBeTurnedOff() {
        withoutResilience4j
                .withPropertyValues("hts.gpu.circuit-breaker.enabled=false")
                .run(context -> assertThat(context.getBean(Scheduler.class).gpu())
                        .containsSame(context.getBean(DeviceBackend.class)));
    }

    @Test
    void aBadThresholdFailsStartUpNamingTheProperty() {
        withoutResilience4j
                .withPropertyValues("hts.gpu.circuit-breaker.failure-rate-threshold=150")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(InvalidHtsPropertyException.class)
                            .hasMessageContaining("hts.gpu.circuit-breaker.failure-rate-threshold")
                            .hasMessageContaining("150")
                            .hasMessageContaining("a percentage above 0 and at most 100");
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class Gpu {

        @Bean
        DeviceBackend testGpu() {
            return new FakeGpuBackend(2);
        }
    }
}
