package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.hts.autoconfigure.health.HtsHealthIndicator;
import io.hts.autoconfigure.support.SimulatedGpus;
import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.NoDeviceException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.AcrossDevices;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The GPU's circuit breaker as the auto-configuration wires it (hts.gpu.circuit-breaker.*, no
 * Resilience4j registry) in front of the backend it starts on simulated devices: work ordered on the
 * devices goes through it, and once launches fail and it opens, tasks with a CPU body run on the CPU.
 */
class HtsGpuCircuitBreakerTests {

    private static final long MIB = 1L << 20;

    /** The simulated launch failure: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, which is not sticky. */
    private static final int LAUNCH_OUT_OF_RESOURCES = 701;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    private final List<TaskEvent> events = new CopyOnWriteArrayList<>();

    private final ApplicationContextRunner runner = SimulatedGpus.on(
                    cuda,
                    new ApplicationContextRunner()
                            .withConfiguration(
                                    AutoConfigurations.of(HtsGpuAutoConfiguration.class, HtsAutoConfiguration.class)))
            .withBean(TaskListener.class, () -> events::add)
            .withPropertyValues(
                    "hts.executor.threads=2",
                    "hts.gpu.circuit-breaker.sliding-window-size=2",
                    "hts.gpu.circuit-breaker.failure-rate-threshold=50",
                    "hts.gpu.circuit-breaker.wait-duration-in-open-state=1h");

    private static CircuitBreakingBackend guarded(Scheduler s) {
        return (CircuitBreakingBackend) s.gpu().orElseThrow();
    }

    /** Two GPU tasks whose kernel launch the device refuses: the breaker's window of two is all failures. */
    private void failTwoLaunches(Scheduler s) {
        for (int i = 0; i < 2; i++) {
            cuda.failNext("cuLaunchKernel", LAUNCH_OUT_OF_RESOURCES);
            TaskGraph g = TaskGraph.named("failing-launch-" + i);
            g.task("k").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                c.kernels().fill(1, 1f, c.scratch(4));
                return 1;
            });
            assertThatThrownBy(() -> s.execute(g))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(CudaException.class)
                    .hasMessageContaining("cuLaunchKernel");
        }
        assertThat(guarded(s).circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(guarded(s).circuitBreaker().getMetrics().getNumberOfFailedCalls())
                .isEqualTo(2);
    }

    /**
     * A task on cuda:1 that follows a task's device work on cuda:0 is launched before that work has
     * run, ordered after it on the device: the breaker hands the device the wrapper of the
     * predecessor it dispatched, so the device finds that predecessor's event.
     */
    @Test
    void workOrderedOnTheDevicesAcrossGpusGoesThroughTheBreaker() {
        cuda.withDevices(2);
        runner.withPropertyValues("hts.gpu.streams-per-device=2").run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            MultiGpuBackend gpus = context.getBean(MultiGpuBackend.class);
            CircuitBreakingBackend breaker = guarded(s);
            assertThat(breaker.delegate()).isSameAs(gpus);

            AcrossDevices across = AcrossDevices.build();
            TaskGraph g = across.graph();
            Task<DeviceBuffer> first = across.first();
            Task<float[]> second = across.second();
            GraphRun run;
            cuda.autoRun(false); // the devices hold their work until the test lets it run
            try {
                run = s.submit(g);
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> gpus.devices().get(1).status().running() == 1);
                assertThat(run.state(first))
                        .as("cuda:1 launched before cuda:0's work ran")
                        .isNotEqualTo(TaskState.SUCCEEDED);
                assertThat(cuda.callsOf("cuStreamWaitEvent"))
                        .as("ordered on the device")
                        .isPositive();
            } finally {
                cuda.autoRun(true);
            }
            assertThat(run.await().result(second)).containsExactly(10f);
            assertThat(breaker.circuitBreaker().getMetrics().getNumberOfSuccessfulCalls())
                    .isEqualTo(2);
            assertThat(breaker.circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.CLOSED);
        });
    }

    /**
     * With when-open=wait the open breaker leaves the GPU usable to the policies (DEGRADED), so a
     * gpu-first task is dispatched to it; the breaker refuses it a permit and hands it to the CPU.
     */
    @Test
    void onceFailedLaunchesOpenTheBreakerATaskDispatchedToTheGpuRunsItsCpuBody() {
        runner.withPropertyValues("hts.gpu.circuit-breaker.when-open=wait", "hts.scheduler.policy=gpu-first")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    failTwoLaunches(s);
                    assertThat(s.gpu().orElseThrow().status()).satisfies(status -> {
                        assertThat(status.health()).isEqualTo(DeviceHealth.DEGRADED);
                        assertThat(status.detail()).startsWith("circuit breaker 'hts-gpu' is OPEN");
                    });

                    AtomicInteger gpuRuns = new AtomicInteger();
                    TaskGraph g = TaskGraph.named("dual");
                    Task<String> both = g.task("both").bodies(ctx -> "cpu", ctx -> {
                        gpuRuns.incrementAndGet();
                        return "gpu";
                    });
                    GraphRun run = s.execute(g);
                    assertThat(run.result(both)).isEqualTo("cpu");
                    assertThat(gpuRuns).hasValue(0);
                    assertThat(run.profile().tasks())
                            .singleElement()
                            .extracting(t -> t.device())
                            .isEqualTo(Device.CPU);
                    assertThat(events)
                            .filteredOn(e -> e.runId() == run.runId() && e.type() == EventType.TASK_PLACED)
                            .extracting(TaskEvent::device, TaskEvent::detail)
                            .contains(tuple(
                                    Device.CPU,
                                    "moved from the GPU to the CPU: circuit breaker 'hts-gpu' of"
                                            + " cuda:0 Simulated GPU is OPEN"));
                });
    }

    /**
     * With when-open=fail (the default) the open breaker reports the GPU DOWN: the policy places a
     * task with a CPU body on the CPU, a GPU-only task fails naming the breaker, and the health says why.
     */
    @Test
    void onceFailedLaunchesOpenTheBreakerTheGpuIsDownTasksRunOnTheCpuAndGpuOnlyOnesFail() {
        runner.run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            failTwoLaunches(s);
            assertThat(guarded(s).status().health()).isEqualTo(DeviceHealth.DOWN);
            assertThat(new HtsHealthIndicator(s).health().getDetails().get("gpu"))
                    .asString()
                    .startsWith("DOWN: circuit breaker 'hts-gpu' is OPEN");

            TaskGraph dual = TaskGraph.named("dual");
            Task<String> both = dual.task("both").bodies(ctx -> "cpu", ctx -> "gpu");
            GraphRun run = s.execute(dual);
            assertThat(run.result(both)).isEqualTo("cpu");
            assertThat(run.profile().tasks())
                    .singleElement()
                    .extracting(t -> t.device())
                    .isEqualTo(Device.CPU);

            TaskGraph gpuOnly = TaskGraph.named("gpu-only");
            gpuOnly.task("k").onGpu(0).gpu(ctx -> 1);
            assertThatThrownBy(() -> s.execute(gpuOnly))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(NoDeviceException.class)
                    .hasMessageContaining("task 'k' has only a GPU body")
                    .hasMessageContaining("circuit breaker 'hts-gpu' is OPEN");
        });
    }
}
