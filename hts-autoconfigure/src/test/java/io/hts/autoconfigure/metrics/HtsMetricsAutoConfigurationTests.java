package io.hts.autoconfigure.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.autoconfigure.support.SimulatedGpuConfiguration;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.memory.DeviceBuffer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class HtsMetricsAutoConfigurationTests {

    private static final long MIB = 1L << 20;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class, HtsMetricsAutoConfiguration.class));

    @Test
    void metricsTurnedOffByPropertyRegisterNoMeterAndNoListener() {
        runner.withPropertyValues("hts.metrics.enabled=false").run(context -> {
            assertThat(context)
                    .hasNotFailed()
                    .hasSingleBean(Scheduler.class)
                    .doesNotHaveBean(HtsMetrics.class)
                    .doesNotHaveBean(HtsGpuMetrics.class);
            TaskGraph g = TaskGraph.named("unmeasured");
            g.task("a").cpu(ctx -> 1);
            assertThat(context.getBean(Scheduler.class).execute(g).isDone()).isTrue();
        });
        runner.withPropertyValues("hts.metrics.enabled=true")
                .run(context -> assertThat(context).hasSingleBean(HtsMetrics.class));
    }

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
            assertThat(registry.get("hts.runs")
                            .tag("graph", "measured")
                            .tag("outcome", "succeeded")
                            .timer()
                            .count())
                    .isOne();
            assertThat(registry.get("hts.tasks")
                            .tag("device", "cpu")
                            .tag("outcome", "succeeded")
                            .tag("policy", "cpu-first")
                            .functionTimer()
                            .count())
                    .isEqualTo(2);
            assertThat(registry.get("hts.executor.executed").functionCounter().count())
                    .isGreaterThanOrEqualTo(2);
            assertThat(registry.get("hts.executor.steals").functionCounter().count())
                    .isEqualTo((double) s.poolStats().steals());
            assertThat(registry.get("hts.executor.idle").gauge().value()).isBetween(0.0, (double) s.parallelism());
            assertThat(registry.get("hts.queue.depth")
                            .tag("device", "cpu")
                            .gauge()
                            .value())
                    .isGreaterThanOrEqualTo(0);
            assertThat(registry.get("hts.queue.depth")
                            .tag("device", "gpu")
                            .gauge()
                            .value())
                    .isZero();
            await().until(() ->
                    registry.get("hts.tasks.active").gauge().value() == 0); // nothing runs once the run ended
            assertThat(registry.get("hts.runs.active").gauge().value()).isZero();
            assertThat(registry.find("hts.tasks").tagKeys("task").functionTimer())
                    .as("no per-task-name tags")
                    .isNull();
        });
    }

    /**
     * Issue 15 item 8: a large run's tasks are added up, not recorded one timer sample each; the
     * series stay few; the policy tag is the one the run was submitted under.
     */
    @Test
    void taskTotalsComeFromOnePassOverTheRunAndTagTheRunsPolicy() {
        runner.withPropertyValues("hts.scheduler.policy=cpu-first").run(context -> {
            MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(HtsMetrics.class).bindTo(registry);
            Scheduler s = context.getBean(Scheduler.class);
            TaskGraph wide = TaskGraph.named("wide");
            for (int i = 0; i < 100_000; i++) {
                wide.task("t" + i).cpu(ctx -> 1);
            }
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            TaskGraph held = TaskGraph.named("held");
            held.task("wait").cpu(ctx -> {
                release.await();
                return 1;
            });
            var heldRun = s.submit(held); // submitted under cpu-first
            s.setPolicy(new io.hts.engine.policy.RoundRobinPolicy());
            s.execute(wide); // under round-robin
            release.countDown();
            heldRun.await();
            await().until(() -> registry.find("hts.tasks")
                                    .tag("policy", "cpu-first")
                                    .functionTimer()
                            != null
                    && registry.find("hts.tasks").tag("policy", "round-robin").functionTimer() != null
                    && registry.get("hts.tasks")
                                    .tag("policy", "round-robin")
                                    .functionTimer()
                                    .count()
                            == 100_000);
            assertThat(registry.get("hts.tasks")
                            .tag("policy", "cpu-first")
                            .functionTimer()
                            .count())
                    .isOne();
            assertThat(registry.get("hts.tasks")
                            .tag("policy", "round-robin")
                            .functionTimer()
                            .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS))
                    .isPositive();
            assertThat(registry.find("hts.tasks").meters())
                    .as("one series per device, outcome and policy")
                    .hasSize(2);
        });
    }

    @Test
    void gpuMemoryIsGaugedPerDevice() {
        runner.withUserConfiguration(SimulatedGpuConfiguration.class).run(context -> {
            MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(HtsGpuMetrics.class).bindTo(registry);
            GpuBackend gpu = context.getBean(GpuBackend.class);
            assertThat(registry.get("hts.gpu.memory.used")
                            .tag("device", "cuda:0")
                            .gauge()
                            .value())
                    .isZero();
            double reserved = registry.get("hts.gpu.memory.reserved")
                    .tag("device", "cuda:0")
                    .gauge()
                    .value();
            assertThat(reserved).isEqualTo(4.0 * MIB);
            try (DeviceBuffer a = gpu.memory().allocate(MIB);
                    DeviceBuffer b = gpu.memory().allocate(MIB / 2)) {
                assertThat(registry.get("hts.gpu.memory.used")
                                .tag("device", "cuda:0")
                                .gauge()
                                .value())
                        .isEqualTo(1.5 * MIB);
                assertThat(registry.get("hts.gpu.memory.free")
                                .tag("device", "cuda:0")
                                .gauge()
                                .value())
                        .isEqualTo(reserved - 1.5 * MIB);
                assertThat(registry.get("hts.gpu.memory.fragmentation")
                                .tag("device", "cuda:0")
                                .gauge()
                                .value())
                        .isBetween(0.0, 1.0);
                assertThat(registry.get("hts.gpu.memory.used").gauge().getId().getBaseUnit())
                        .isEqualTo("bytes");
            }
            assertThat(registry.get("hts.gpu.memory.used")
                            .tag("device", "cuda:0")
                            .gauge()
                            .value())
                    .isZero();
        });
    }

    @Test
    void withoutAGpuBackendThereAreNoGpuGauges() {
        runner.run(
                context -> assertThat(context).hasSingleBean(HtsMetrics.class).doesNotHaveBean(HtsGpuMetrics.class));
    }

    @Test
    void withoutMicrometerThereAreNoMetricsAndTheSchedulerStillWorks() {
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class)).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(HtsMetrics.class).hasSingleBean(Scheduler.class);
        });
    }
}
