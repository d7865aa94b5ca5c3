package io.hts.autoconfigure.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The {@code hts} health contributor: defined with a scheduler and Spring Boot's health support,
 * off by property, replaced by an application's bean; UP while the scheduler takes work and DOWN
 * after its shutdown; a GPU that is DOWN, or behind an open or half-open circuit breaker, shows in
 * the details and leaves HTS UP (its CPU work goes on).
 */
class HtsHealthContributorAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(HtsAutoConfiguration.class, HtsHealthContributorAutoConfiguration.class));

    private static Health health(org.springframework.context.ApplicationContext context) {
        return context.getBean("htsHealthIndicator", HealthIndicator.class).health();
    }

    @Test
    void upWithTheWorkersAndActiveRunsWhileTheSchedulerTakesWork() {
        runner.withPropertyValues("hts.executor.threads=3").run(context -> {
            assertThat(context).hasSingleBean(HtsHealthIndicator.class);
            Health health = health(context);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails())
                    .containsEntry("workers", 3)
                    .containsEntry("activeRuns", 0)
                    .containsEntry("cpu", "UP");
        });
    }

    @Test
    void downOnceTheSchedulerIsShutDown() {
        runner.run(context -> {
            context.getBean(Scheduler.class).shutdown();
            assertThat(health(context).getStatus()).isEqualTo(Status.DOWN);
        });
    }

    @Test
    void aGpuThatIsDownShowsInTheDetailsAndLeavesHtsUp() {
        FakeGpuBackend gpu = new FakeGpuBackend(2);
        gpu.setHealth(DeviceHealth.DOWN, "CUDA_ERROR_ILLEGAL_ADDRESS poisoned the context");
        runner.withBean(DeviceBackend.class, () -> gpu).run(context -> {
            Health health = health(context);
            assertThat(health.getStatus()).as("tasks with CPU bodies still run").isEqualTo(Status.UP);
            assertThat(health.getDetails().get("gpu"))
                    .asString()
                    .startsWith("DOWN: ")
                    .contains("CUDA_ERROR_ILLEGAL_ADDRESS poisoned the context");
        });
    }

    @Test
    void theCircuitBreakersStatesShowInTheGpuDetail() {
        runner.withConfiguration(AutoConfigurations.of(CircuitBreakerAutoConfiguration.class))
                .withBean(DeviceBackend.class, () -> new FakeGpuBackend(2))
                .run(context -> {
                    CircuitBreaker breaker = ((CircuitBreakingBackend)
                                    context.getBean(Scheduler.class).gpu().orElseThrow())
                            .circuitBreaker();
                    assertThat(health(context).getDetails()).containsEntry("gpu", "UP");
                    breaker.transitionToOpenState();
                    assertThat(health(context).getDetails().get("gpu"))
                            .asString()
                            .startsWith("DOWN: circuit breaker 'hts-gpu' is OPEN");
                    breaker.transitionToHalfOpenState();
                    assertThat(health(context).getDetails().get("gpu"))
                            .asString()
                            .startsWith("DEGRADED: circuit breaker 'hts-gpu' is HALF_OPEN");
                    breaker.transitionToClosedState();
                    assertThat(health(context).getDetails()).containsEntry("gpu", "UP");
                    assertThat(health(context).getStatus()).isEqualTo(Status.UP);
                });
    }

    @Test
    void turnedOffByProperty() {
        runner.withPropertyValues("management.health.hts.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("htsHealthIndicator"));
    }

    @Test
    void withoutSpringBootHealthThereIsNoContributorAndTheSchedulerStillStarts() {
        runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(Scheduler.class)
                        .doesNotHaveBean("htsHealthIndicator"));
    }

    @Test
    void withoutASchedulerThereIsNoContributor() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HtsHealthContributorAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("htsHealthIndicator"));
    }

    @Test
    void anApplicationsBeanNamedHtsHealthIndicatorWins() {
        HealthIndicator mine = () -> Health.up().withDetail("mine", true).build();
        runner.withBean("htsHealthIndicator", HealthIndicator.class, () -> mine).run(context -> {
            assertThat(context).doesNotHaveBean(HtsHealthIndicator.class);
            assertThat(health(context).getDetails()).containsEntry("mine", true);
        });
    }
}
