package io.hts.autoconfigure.metrics;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class HtsMetricsAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class, HtsMetricsAutoConfiguration.class));

    @Test
    void runsAndTasksAreTimedAndThePoolIsGauged() {
        runner.withPropertyValues("hts.scheduler.policy=cpu-first").run(context -> {
            MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(HtsMetrics.class).bindTo(registry);
            Scheduler s = context.getBean(Scheduler.class);
            TaskGraph g = TaskGraph.named("measured");
            var a = g.task("a").cpu(ctx -> 1);
            g.task("b").after(a).cpu(ctx -> ctx.input(a) + 1);
            s.execute(g);
            await().until(() -> registry.find("hts.runs").timer() != null);
            assertThat(registry.get("hts.runs").tag("graph", "measured").tag("outcome", "succeeded").timer().count())
                    .isOne();
            assertThat(registry.get("hts.tasks").tag("device", "cpu").tag("outcome", "succeeded")
                    .tag("policy", "cpu-first").timer().count()).isEqualTo(2);
            assertThat(registry.get("hts.executor.executed").functionCounter().count()).isGreaterThanOrEqualTo(2);
            assertThat(registry.get("hts.executor.steals").functionCounter()).isNotNull();
            assertThat(registry.get("hts.executor.idle").gauge().value()).isBetween(0.0, (double) s.parallelism());
            assertThat(registry.get("hts.queue.depth").tag("device", "cpu").gauge().value()).isGreaterThanOrEqualTo(0);
            assertThat(registry.get("hts.queue.depth").tag("device", "gpu").gauge().value()).isZero();
            assertThat(registry.get("hts.tasks.active").gauge()).isNotNull();
            assertThat(registry.get("hts.runs.active").gauge().value()).isZero();
            assertThat(registry.find("hts.tasks").tagKeys("task").timer()).as("no per-task-name tags").isNull();
        });
    }

    @Test
    void withoutMicrometerThereAreNoMetricsAndTheSchedulerStillWorks() {
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class)).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(HtsMetrics.class).hasSingleBean(Scheduler.class);
        });
    }
}
