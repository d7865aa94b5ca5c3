package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.MemoryShortage;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The effect on the auto-configured scheduler of each {@code hts.*} property that no other test
 * sets to a valid value: the events buffer's size, the profiler's kept runs and bytes, the memory
 * shortage mode, the stall watchdog, the default time limit, and how long the GPU's private circuit
 * breaker stays open. Each is checked against its default, so a property that were ignored would fail.
 */
class HtsPropertyEffectsTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class));

    private static TaskGraph failing(String name, int tasks) {
        TaskGraph g = TaskGraph.named(name);
        g.group(
                "f",
                tasks,
                (i, t) -> t.cpu(ctx -> {
                    throw new IllegalStateException("f" + i);
                }));
        return g;
    }

    private static TaskGraph one(String name) {
        TaskGraph g = TaskGraph.named(name);
        g.task("a").cpu(ctx -> 1);
        return g;
    }

    @Test
    void eventsBufferSizeBoundsTheRecentEventsTheSchedulerKeeps() {
        runner.run(context -> assertThat(context.getBean(Scheduler.class)
                        .eventLog()
                        .orElseThrow()
                        .capacity())
                .isEqualTo(10_000));
        runner.withPropertyValues("hts.events.buffer-size=5").run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            assertThat(s.eventLog().orElseThrow().capacity()).isEqualTo(5);
            GraphRun run = s.submit(failing("twelve", 12), RunOptions.failureMode(FailureMode.CONTINUE));
            assertThat(run.future()).failsWithin(Duration.ofSeconds(10));
            // 12 TASK_FAILED events and the run's own: only the latest 5 are kept.
            assertThat(s.eventLog().orElseThrow().recent(100)).hasSize(5);
        });
        runner.withPropertyValues("hts.events.buffer-size=0")
                .run(context -> assertThat(context.getBean(Scheduler.class).eventLog())
                        .as("0: no buffer")
                        .isEmpty());
    }

    @Test
    void profilingRetainedRunsBoundsTheProfilesKept() {
        runner.run(context -> assertThat(
                        context.getBean(Scheduler.class).profiler().retainedRuns())
                .isEqualTo(20));
        runner.withPropertyValues("hts.profiling.retained-runs=2").run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            assertThat(s.profiler().retainedRuns()).isEqualTo(2);
            TaskGraph g = one("kept");
            long first = s.execute(g).runId();
            long second = s.execute(g).runId();
            long third = s.execute(g).runId();
            assertThat(s.profiler().recentRuns()).extracting(p -> p.runId()).containsExactlyInAnyOrder(second, third);
            assertThat(s.profiler().run(first)).isEmpty();
        });
    }

    @Test
    void profilingRetainedSizeBoundsTheBytesOfTheProfilesKept() {
        runner.run(context -> assertThat(
                        context.getBean(Scheduler.class).profiler().retainedBytes())
                .isEqualTo(64L << 20));
        runner.withPropertyValues("hts.profiling.retained-size=1KB").run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            assertThat(s.profiler().retainedBytes()).isEqualTo(1024);
            TaskGraph small = one("small");
            GraphRun kept = s.execute(small);
            assertThat(s.profiler().run(kept.runId()))
                    .as("a one-task profile fits in 1KB")
                    .isPresent();
            TaskGraph big = TaskGraph.named("big");
            big.group("t", 2_000, (i, t) -> t.cpu(ctx -> i));
            GraphRun tooBig = s.execute(big);
            assertThat(s.profiler().run(tooBig.runId()))
                    .as("a profile larger than the bound is not kept")
                    .isEmpty();
            assertThat(s.profiler().notKeptRuns()).isPositive();
            assertThat(s.profiler().retainedBytesNow()).isLessThanOrEqualTo(1024);
        });
    }

    @Test
    void memoryShortageReachesTheScheduler() {
        runner.run(context ->
                assertThat(context.getBean(Scheduler.class).memoryShortage()).isEqualTo(MemoryShortage.WAIT));
        runner.withPropertyValues("hts.scheduler.memory-shortage=run-on-cpu")
                .run(context -> assertThat(context.getBean(Scheduler.class).memoryShortage())
                        .isEqualTo(MemoryShortage.RUN_ON_CPU));
    }

    /** Collects RUN_STALLED events. */
    @Configuration(proxyBeanMethods = false)
    static class StallListener {

        static final ConcurrentLinkedQueue<TaskEvent> STALLS = new ConcurrentLinkedQueue<>();

        @Bean
        TaskListener stalls() {
            return new TaskListener() {
                @Override
                public void onEvent(TaskEvent event) {
                    if (event.type() == EventType.RUN_STALLED) {
                        STALLS.add(event);
                    }
                }

                @Override
                public boolean wantsRoutineEvents() {
                    return false;
                }
            };
        }
    }

    @Test
    void stallTimeoutStartsTheWatchdogThatReportsARunFinishingNothing() {
        StallListener.STALLS.clear();
        runner.withUserConfiguration(StallListener.class)
                .withPropertyValues("hts.scheduler.stall-timeout=50ms")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    CountDownLatch release = new CountDownLatch(1);
                    TaskGraph g = TaskGraph.named("stuck");
                    g.task("waits").cpu(ctx -> release.await(30, TimeUnit.SECONDS));
                    GraphRun run = s.submit(g);
                    try {
                        org.awaitility.Awaitility.await()
                                .atMost(Duration.ofSeconds(20))
                                .until(() -> StallListener.STALLS.stream().anyMatch(e -> e.runId() == run.runId()));
                    } finally {
                        release.countDown();
                    }
                    assertThat(run.await().status()).isEqualTo(RunStatus.SUCCEEDED);
                });
    }

    @Test
    void defaultTimeoutLimitsEveryAttemptOfTasksThatDeclareNone() {
        runner.withPropertyValues("hts.tasks.default-timeout=200ms").run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            CountDownLatch never = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("limited");
            Task<Boolean> slow = g.task("slow").cpu(ctx -> never.await(60, TimeUnit.SECONDS));
            Task<Boolean> exempt = g.task("exempt").noTimeout().cpu(ctx -> true);
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThatThrownBy(run::await)
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(TimeoutException.class);
            assertThat(run.state(slow)).isEqualTo(TaskState.FAILED);
            assertThat(run.result(exempt)).isTrue();
        });
    }

    @Test
    void waitDurationInOpenStateSetsHowLongThePrivateGpuBreakerStaysOpen() {
        ApplicationContextRunner withGpu = runner.withUserConfiguration(HtsResilienceTests.Gpu.class);
        withGpu.run(context -> assertThat(((CircuitBreakingBackend)
                                context.getBean(Scheduler.class).gpu().orElseThrow())
                        .circuitBreaker()
                        .getCircuitBreakerConfig()
                        .getWaitIntervalFunctionInOpenState()
                        .apply(1))
                .as("the default, 30s")
                .isEqualTo(30_000L));
        withGpu.withPropertyValues("hts.gpu.circuit-breaker.wait-duration-in-open-state=7s")
                .run(context -> {
                    CircuitBreakingBackend gpu = (CircuitBreakingBackend)
                            context.getBean(Scheduler.class).gpu().orElseThrow();
                    assertThat(gpu.circuitBreaker()
                                    .getCircuitBreakerConfig()
                                    .getWaitIntervalFunctionInOpenState()
                                    .apply(1))
                            .isEqualTo(7_000L);
                });
    }
}
