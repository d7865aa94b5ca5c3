package io.hts.engine.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CircuitBreakingBackendTests {

    private static CircuitBreaker breaker(Duration open) {
        return CircuitBreaker.of(
                "hts-gpu",
                CircuitBreakerConfig.custom()
                        .slidingWindowSize(4)
                        .minimumNumberOfCalls(4)
                        .failureRateThreshold(50)
                        .waitDurationInOpenState(open)
                        .automaticTransitionFromOpenToHalfOpenEnabled(true)
                        .permittedNumberOfCallsInHalfOpenState(1)
                        .build());
    }

    private static TaskGraph failingOnGpu(int tasks) {
        TaskGraph g = TaskGraph.named("broken-gpu");
        g.group(
                "bad",
                tasks,
                (i, t) -> t.gpu(ctx -> {
                    throw new IllegalStateException("kernel " + i + " failed");
                }));
        return g;
    }

    @Test
    void gpuFailuresOpenTheBreakerThenDualTasksRunOnTheCpuAndGpuOnlyTasksFailSayingWhy() {
        CircuitBreaker breaker = breaker(Duration.ofMinutes(5));
        CircuitBreakingBackend gpu =
                new CircuitBreakingBackend(new FakeGpuBackend(2), breaker, null, CircuitBreakingBackend.WhenOpen.FAIL);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .build()) {
            assertThatThrownBy(() -> s.submit(failingOnGpu(4), RunOptions.failureMode(FailureMode.CONTINUE))
                            .await())
                    .isInstanceOf(GraphRunException.class);
            assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DOWN);
            assertThat(gpu.status().detail()).startsWith("circuit breaker 'hts-gpu' is OPEN (failure rate 100.0 %)");

            TaskGraph g = TaskGraph.named("after-opening");
            Task<Device> dual = g.task("dual").bodies(ctx -> ctx.device(), ctx -> ctx.device());
            Task<String> gpuOnly = g.task("gpu-only").gpu(ctx -> "never");
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThatThrownBy(run::await)
                    .isInstanceOf(GraphRunException.class)
                    .hasStackTraceContaining("task 'gpu-only' has only a GPU body and the GPU backend is DOWN:"
                            + " circuit breaker 'hts-gpu' is OPEN");
            assertThat(run.result(dual)).isEqualTo(Device.CPU);
            assertThat(run.state(gpuOnly)).isEqualTo(TaskState.FAILED);
        }
    }

    @Test
    void whileOpenGpuOnlyTasksWaitAndRunOnceTheBreakerLetsCallsThrough() {
        // open for longer than any test: the test itself lets calls through, when it has seen the wait
        CircuitBreaker breaker = breaker(Duration.ofMinutes(5));
        CircuitBreakingBackend gpu =
                new CircuitBreakingBackend(new FakeGpuBackend(2), breaker, null, CircuitBreakingBackend.WhenOpen.WAIT);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .build()) {
            breaker.transitionToOpenState();
            assertThat(gpu.status().health()).isEqualTo(DeviceHealth.DEGRADED);
            TaskGraph g = TaskGraph.named("waits");
            Task<Device> dual = g.task("dual").bodies(ctx -> ctx.device(), ctx -> ctx.device());
            Task<Device> gpuOnly = g.task("gpu-only").gpu(ctx -> ctx.device());
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> run.state(dual) == TaskState.SUCCEEDED && gpu.waiting() == 1);
            assertThat(run.result(dual)).as("moved to the CPU while open").isEqualTo(Device.CPU);
            assertThat(run.state(gpuOnly)).as("waits while open").isNotIn(TaskState.SUCCEEDED, TaskState.FAILED);
            breaker.transitionToHalfOpenState();
            run.await();
            assertThat(run.result(gpuOnly)).isEqualTo(Device.GPU);
            assertThat(breaker.getState()).isIn(CircuitBreaker.State.HALF_OPEN, CircuitBreaker.State.CLOSED);
            assertThat(gpu.waiting()).isZero();
        }
    }

    @Test
    void cancellingARunFailsItsWaitingTasksAsCancelled() {
        CircuitBreaker breaker = breaker(Duration.ofMinutes(5));
        CircuitBreakingBackend gpu =
                new CircuitBreakingBackend(new FakeGpuBackend(1), breaker, null, CircuitBreakingBackend.WhenOpen.WAIT);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            breaker.transitionToOpenState();
            TaskGraph g = TaskGraph.named("cancelled-while-waiting");
            Task<String> t = g.task("gpu-only").gpu(ctx -> "never");
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(10)).until(() -> gpu.waiting() == 1);
            run.cancel();
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            assertThat(run.state(t)).isEqualTo(TaskState.CANCELLED);
            assertThat(gpu.waiting()).isZero();
            assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
        }
    }

    @Test
    void aBulkheadCapsTheTasksOnTheDeviceAndTheRestWaitWithoutACpuThread() {
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        Bulkhead bulkhead = Bulkhead.of(
                "hts-gpu",
                BulkheadConfig.custom()
                        .maxConcurrentCalls(2)
                        .maxWaitDuration(Duration.ZERO)
                        .build());
        CircuitBreakingBackend gpu = new CircuitBreakingBackend(
                new FakeGpuBackend(6), breaker(Duration.ofSeconds(1)), bulkhead, CircuitBreakingBackend.WhenOpen.WAIT);
        // The GPU bodies finish only once a CPU task declared after them has run on the one CPU
        // worker: a waiting GPU task that held a CPU thread (the worker, or the caller making the
        // roots ready) would keep that task from ever running.
        java.util.concurrent.CountDownLatch cpuTaskRan = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger sawCpuTask = new AtomicInteger();
        try (Scheduler s = Scheduler.builder().threads(1).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("capped");
            var all = g.group(
                    "k",
                    24,
                    (i, t) -> t.gpu(ctx -> {
                        int now = inFlight.incrementAndGet();
                        most.accumulateAndGet(now, Math::max);
                        if (cpuTaskRan.await(10, java.util.concurrent.TimeUnit.SECONDS)) {
                            sawCpuTask.incrementAndGet();
                        }
                        for (long spin = System.nanoTime(); System.nanoTime() - spin < 2_000_000; ) {
                            Thread.onSpinWait(); // 2 ms of "device work" that overlaps when allowed to
                        }
                        inFlight.decrementAndGet();
                        return i;
                    }));
            g.task("cpu").cpu(ctx -> {
                cpuTaskRan.countDown();
                return -1;
            });
            GraphRun run = s.execute(g);
            assertThat(run.results(all)).hasSize(24);
            assertThat(sawCpuTask)
                    .as("GPU bodies that saw the CPU task run while the rest waited")
                    .hasValue(24);
            assertThat(most.get()).isBetween(1, 2);
            assertThat(bulkhead.getMetrics().getAvailableConcurrentCalls()).isEqualTo(2);
        }
    }
}
