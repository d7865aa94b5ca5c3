package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.DefaultPolicy;
import io.hts.engine.policy.RoundRobinPolicy;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextClosedEvent;

class HtsAutoConfigurationTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class));

    @Test
    void defaultsGiveASchedulerWithTheDefaultPolicyAndNoExecutorBean() {
        runner.run(context -> {
            assertThat(context)
                    .hasSingleBean(Scheduler.class)
                    .hasSingleBean(SchedulingPolicy.class)
                    .doesNotHaveBean(java.util.concurrent.Executor.class);
            Scheduler s = context.getBean(Scheduler.class);
            assertThat(s.policy()).isInstanceOf(DefaultPolicy.class);
            assertThat(s.parallelism()).isEqualTo(Runtime.getRuntime().availableProcessors());
            assertThat(s.profilingEnabled()).isTrue();
            assertThat(s.defaultFailureMode()).isEqualTo(FailureMode.FAIL_FAST);
            assertThat(s.gpu()).isEmpty();
        });
    }

    @Test
    void propertiesConfigureTheScheduler() {
        runner.withPropertyValues(
                        "hts.scheduler.policy=round-robin",
                        "hts.scheduler.failure-mode=continue",
                        "hts.executor.threads=3",
                        "hts.profiling.enabled=false")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    assertThat(s.policy()).isInstanceOf(RoundRobinPolicy.class);
                    assertThat(s.parallelism()).isEqualTo(3);
                    assertThat(s.profilingEnabled()).isFalse();
                    assertThat(s.defaultFailureMode()).isEqualTo(FailureMode.CONTINUE);
                });
    }

    @Test
    void anApplicationsPolicyBeanWins() {
        runner.withUserConfiguration(CustomPolicy.class)
                .withPropertyValues("hts.scheduler.policy=gpu-first")
                .run(context -> assertThat(context.getBean(Scheduler.class).policy())
                        .isSameAs(context.getBean(SchedulingPolicy.class))
                        .isInstanceOf(RoundRobinPolicy.class));
    }

    @Test
    void anApplicationsSchedulerBeanWins() {
        runner.withUserConfiguration(CustomScheduler.class).run(context -> {
            assertThat(context).hasSingleBean(Scheduler.class);
            assertThat(context.getBean(Scheduler.class).parallelism()).isOne();
        });
    }

    @Test
    void anUnknownPolicyFailsStartUpNamingTheProperty() {
        runner.withPropertyValues("hts.scheduler.policy=fastest").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .hasStackTraceContaining("hts.scheduler.policy")
                    .hasStackTraceContaining("fastest");
        });
    }

    @Test
    void aBadThreadCountFailsStartUpWithAnAnalysisNamingThePropertyAndWhatIsAccepted() {
        runner.withPropertyValues("hts.executor.threads=-2").run(context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            assertThat(failure).hasRootCauseInstanceOf(InvalidHtsPropertyException.class);
            FailureAnalysis analysis = new HtsFailureAnalyzer().analyze(failure);
            assertThat(analysis).isNotNull();
            assertThat(analysis.getDescription()).isEqualTo("Invalid value '-2' for property 'hts.executor.threads'.");
            assertThat(analysis.getAction()).contains("hts.executor.threads accepts an integer from 1 to 65534");
        });
        runner.withPropertyValues("hts.tasks.default-retries=-1")
                .run(context -> assertThat(context.getStartupFailure())
                        .hasRootCauseMessage(
                                "Invalid value '-1' for property 'hts.tasks.default-retries': accepted is an"
                                        + " integer from 0 to 2147483646"));
    }

    @Test
    void graphBeansAreRegisteredByNameAndDefaultRetriesApply() {
        runner.withUserConfiguration(Graphs.class)
                .withPropertyValues("hts.tasks.default-retries=2", "hts.tasks.default-backoff=1ms")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    assertThat(s.registeredGraphs()).containsOnlyKeys("flaky");
                    TaskGraph flaky = s.registeredGraphs().get("flaky");
                    GraphRun run = s.execute(flaky);
                    assertThat(run.states()).containsEntry("third-time-lucky", TaskState.SUCCEEDED);
                });
    }

    @Test
    void closingTheContextDrainsRunsAndEndsTheWorkerThreads() {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch closing = new CountDownLatch(1);
        AtomicInteger ranAfterClosingBegan = new AtomicInteger();
        GraphRun[] run = new GraphRun[1];
        runner.withPropertyValues("hts.executor.thread-name-prefix=hts-lifecycle-test-")
                .withBean("closingSignal", ApplicationListener.class, () ->
                        (ApplicationListener<ContextClosedEvent>) e -> closing.countDown())
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    TaskGraph g = TaskGraph.named("drained");
                    g.task("held").cpu(ctx -> {
                        started.countDown();
                        // still running when the context starts to close: the close must wait for it
                        if (closing.await(10, TimeUnit.SECONDS)) {
                            ranAfterClosingBegan.incrementAndGet();
                        }
                        return 1;
                    });
                    run[0] = s.submit(g);
                    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                });
        assertThat(ranAfterClosingBegan)
                .as("the body was still running when the close began, and ended")
                .hasValue(1);
        assertThat(run[0].status()).as("drained, not cancelled").isEqualTo(RunStatus.SUCCEEDED);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> Thread.getAllStackTraces().keySet().stream()
                        .noneMatch(t -> t.getName().startsWith("hts-lifecycle-test-")));
    }

    @Test
    void whatCannotDrainWithinTheShutdownPhaseIsCancelledWithItsStateRecorded() {
        CountDownLatch started = new CountDownLatch(1);
        GraphRun[] run = new GraphRun[1];
        runner.withPropertyValues("spring.lifecycle.timeout-per-shutdown-phase=1s")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    TaskGraph g = TaskGraph.named("stuck");
                    Task<Integer> blocked = g.task("blocked").cpu(ctx -> {
                        started.countDown();
                        while (true) {
                            ctx.checkCancelled(); // a cooperative body: throws once the run is cancelled
                            Thread.onSpinWait();
                        }
                    });
                    g.task("after").after(blocked).cpu(ctx -> 1);
                    run[0] = s.submit(g);
                    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                });
        assertThat(run[0].isDone()).isTrue();
        assertThat(run[0].states())
                .containsEntry("blocked", TaskState.CANCELLED)
                .containsEntry("after", TaskState.CANCELLED);
    }

    @Test
    void theApplicationsResilience4jRegistriesResolveNamedInstances() {
        runner.withUserConfiguration(Registries.class).run(context -> {
            assertThat(context).doesNotHaveBean(io.github.resilience4j.timelimiter.TimeLimiterRegistry.class);
            Scheduler s = context.getBean(Scheduler.class);
            AtomicInteger attempts = new AtomicInteger();
            TaskGraph g = TaskGraph.named("named-retry");
            g.task("flaky").retry("hts-cpu").cpu(ctx -> {
                if (attempts.incrementAndGet() < 4) {
                    throw new IllegalStateException("attempt " + attempts.get());
                }
                return attempts.get();
            });
            assertThat(s.execute(g).states()).containsEntry("flaky", TaskState.SUCCEEDED);
            assertThat(attempts).hasValue(4); // the registry's hts-cpu allows 4 attempts
        });
    }

    @Test
    void withoutResilience4jRegistriesHtsDefinesNone() {
        runner.run(context -> assertThat(context)
                .doesNotHaveBean(io.github.resilience4j.retry.RetryRegistry.class)
                .doesNotHaveBean(io.github.resilience4j.timelimiter.TimeLimiterRegistry.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class Registries {

        @Bean
        io.github.resilience4j.retry.RetryRegistry retryRegistry() {
            io.github.resilience4j.retry.RetryRegistry registry =
                    io.github.resilience4j.retry.RetryRegistry.ofDefaults();
            registry.retry(
                    "hts-cpu",
                    io.github.resilience4j.retry.RetryConfig.custom()
                            .maxAttempts(4)
                            .waitDuration(Duration.ofMillis(1))
                            .build());
            return registry;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomPolicy {

        @Bean
        SchedulingPolicy myPolicy() {
            return new RoundRobinPolicy();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomScheduler {

        @Bean
        Scheduler myScheduler() {
            return Scheduler.builder().threads(1).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Graphs {

        @Bean
        TaskGraph flaky() {
            AtomicInteger attempts = new AtomicInteger();
            TaskGraph g = TaskGraph.named("flaky");
            g.task("third-time-lucky").cpu(ctx -> {
                if (attempts.incrementAndGet() < 3) {
                    throw new IllegalStateException("attempt " + attempts.get());
                }
                return attempts.get();
            });
            return g;
        }
    }
}
