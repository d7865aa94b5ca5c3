package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.autoconfigure.support.SimulatedGpus;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuUnavailableException;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.memory.MemoryStatistics;
import io.hts.gpu.memory.PoolSettings;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The hts.gpu.* properties reach the backends the auto-configuration starts, end to end: the
 * application's {@link GpuDiscoverer} supplies simulated devices, and each test asserts on what the
 * started backend does or was started with, not only on the context starting.
 */
class HtsGpuPropertiesTests {

    private static final long MIB = 1L << 20;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    /** The auto-configuration on the simulated devices, with a small pool so that several fit. */
    private final ApplicationContextRunner runner = SimulatedGpus.on(
                    cuda,
                    new ApplicationContextRunner()
                            .withConfiguration(
                                    AutoConfigurations.of(HtsGpuAutoConfiguration.class, HtsAutoConfiguration.class)))
            .withPropertyValues("hts.executor.threads=2");

    /** A GPU task that enqueues a kernel, so that the device has work in flight. */
    private static Task<Integer> kernel(TaskGraph g, String name) {
        return g.task(name).gpu(ctx -> {
            GpuContext c = ctx.unwrap(GpuContext.class);
            c.kernels().fill(1, 1f, c.scratch(4));
            return c.deviceOrdinal();
        });
    }

    @Test
    void streamsPerDeviceIsEachStartedDevicesStreamsAndCapsItsTasksInFlight() {
        cuda.withDevices(2);
        runner.withPropertyValues("hts.gpu.streams-per-device=3").run(context -> {
            MultiGpuBackend gpus = context.getBean(MultiGpuBackend.class);
            assertThat(gpus.devices()).hasSize(2).allSatisfy(gpu -> {
                assertThat(gpu.streams().size()).isEqualTo(3);
                assertThat(gpu.settings().streams()).isEqualTo(3);
                assertThat(gpu.status().capacity()).isEqualTo(3);
            });
            assertThat(context.getBean(Scheduler.class).gpu())
                    .get()
                    .extracting(b -> b.status().capacity())
                    .as("what the policies see: both devices' streams")
                    .isEqualTo(6);

            GpuBackend first = gpus.devices().get(0);
            TaskGraph g = TaskGraph.named("four-on-cuda-0");
            g.group(
                    "k",
                    4,
                    (i, t) -> t.onGpu(0).gpu(ctx -> {
                        GpuContext c = ctx.unwrap(GpuContext.class);
                        c.kernels().fill(1, i, c.scratch(4));
                        return i;
                    }));
            cuda.autoRun(false); // the device holds the work until the test lets it run
            GraphRun run;
            try {
                run = context.getBean(Scheduler.class).submit(g);
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> first.status().running() == 3);
                assertThat(first.status().queued())
                        .as("the fourth waits for a stream")
                        .isEqualTo(1);
            } finally {
                cuda.autoRun(true);
            }
            run.await();
        });
    }

    @Test
    void everyMemoryPoolPropertyShapesTheStartedPool() {
        runner.withPropertyValues(
                        "hts.gpu.memory-pool.initial=6MB",
                        "hts.gpu.memory-pool.maximum=12MB",
                        "hts.gpu.memory-pool.arena-size=2MB",
                        "hts.gpu.memory-pool.minimum-block=4KB")
                .run(context -> {
                    DeviceMemoryPool pool = context.getBean(MultiGpuBackend.class)
                            .devices()
                            .get(0)
                            .memory();
                    assertThat(pool.settings()).isEqualTo(new PoolSettings(6 * MIB, 12 * MIB, 2 * MIB, 4096));
                    MemoryStatistics start = pool.statistics();
                    assertThat(start.capacity())
                            .as("initial: reserved at start")
                            .isEqualTo(6 * MIB);
                    assertThat(start.arenas())
                            .as("arena-size: in arenas of 2 MiB")
                            .isEqualTo(3);
                    assertThat(start.limit()).as("maximum").isEqualTo(12 * MIB);
                    assertThat(cuda.allocatedBytes()).as("what the device gave").isEqualTo(6 * MIB);

                    try (DeviceBuffer one = pool.allocate(1)) {
                        assertThat(pool.statistics().used())
                                .as("minimum-block: the smallest block")
                                .isEqualTo(4096);
                        DeviceBuffer[] arenas = {pool.allocate(2 * MIB), pool.allocate(2 * MIB)};
                        assertThat(pool.statistics().capacity())
                                .as("the initial arenas serve these")
                                .isEqualTo(6 * MIB);
                        DeviceBuffer grown = pool.allocate(2 * MIB);
                        assertThat(pool.statistics())
                                .as("arena-size: the pool grows by one arena")
                                .extracting(MemoryStatistics::capacity, MemoryStatistics::arenas)
                                .containsExactly(8 * MIB, 4);
                        DeviceBuffer[] upToTheMaximum = {pool.allocate(2 * MIB), pool.allocate(2 * MIB)};
                        assertThat(pool.statistics().capacity()).isEqualTo(12 * MIB);
                        assertThat(pool.tryAllocate(2 * MIB))
                                .as("maximum: no growth past 12 MiB")
                                .isNull();
                        assertThat(cuda.allocatedBytes()).isEqualTo(12 * MIB);
                        for (DeviceBuffer b :
                                new DeviceBuffer[] {arenas[0], arenas[1], grown, upToTheMaximum[0], upToTheMaximum[1]
                                }) {
                            b.close();
                        }
                    }
                });
    }

    @Test
    void anUnsetPoolMaximumIsNinetyPercentOfEachDevicesMemoryAndInitialIsCappedByIt() {
        SimulatedGpus.discovering(
                        cuda,
                        new ApplicationContextRunner()
                                .withConfiguration(AutoConfigurations.of(
                                        HtsGpuAutoConfiguration.class, HtsAutoConfiguration.class)))
                .withPropertyValues("hts.gpu.memory-pool.initial=1GB", "hts.gpu.memory-pool.arena-size=64MB")
                .run(context -> {
                    DeviceMemoryPool pool = context.getBean(MultiGpuBackend.class)
                            .devices()
                            .get(0)
                            .memory();
                    long ninety = 256 * MIB / 10 * 9;
                    assertThat(pool.settings().maximumBytes()).isEqualTo(ninety);
                    assertThat(pool.settings().initialBytes()).isEqualTo(ninety);
                    assertThat(pool.statistics().capacity())
                            .as("reserved, to a whole minimum block")
                            .isEqualTo(ninety / 256 * 256);
                });
    }

    @Test
    void spinWhileBusyMakesTheLauncherSpinInsteadOfAskingTheDeviceForAWakeUp() {
        runner.withPropertyValues("hts.gpu.spin-while-busy=true", "hts.gpu.poll-spin=2ms")
                .run(context -> {
                    GpuBackend gpu =
                            context.getBean(MultiGpuBackend.class).devices().get(0);
                    assertThat(gpu.settings().spinWhileBusy()).isTrue();
                    assertThat(gpu.settings().pollSpin()).isEqualTo(Duration.ofMillis(2));
                    TaskGraph g = TaskGraph.named("spin");
                    Task<Integer> k = kernel(g, "k");
                    assertThat(context.getBean(Scheduler.class)
                                    .submit(g)
                                    .await()
                                    .result(k))
                            .isZero();
                    assertThat(cuda.callsOf("cuLaunchHostFunc"))
                            .as("no completion callback: the launcher spins")
                            .isZero();
                });
    }

    @Test
    void withoutSpinWhileBusyTheLauncherSleepsAndWorkOfUnknownLengthGetsAWakeUpCallback() {
        runner.run(context -> {
            GpuBackend gpu = context.getBean(MultiGpuBackend.class).devices().get(0);
            assertThat(gpu.settings().spinWhileBusy()).isFalse();
            TaskGraph g = TaskGraph.named("sleep");
            Task<Integer> k = kernel(g, "k");
            assertThat(context.getBean(Scheduler.class).submit(g).await().result(k))
                    .isZero();
            assertThat(cuda.callsOf("cuLaunchHostFunc"))
                    .as("the first task of a name: length unknown")
                    .isPositive();
        });
    }

    @Test
    void devicesStartsTheChosenGpusOnlyInTheOrderGiven() {
        cuda.withDevices(3);
        runner.withPropertyValues("hts.gpu.devices=2,0").run(context -> {
            MultiGpuBackend gpus = context.getBean(MultiGpuBackend.class);
            assertThat(gpus.devices()).extracting(b -> b.deviceInfo().ordinal()).containsExactly(2, 0);
            assertThat(cuda.allocatedBytes())
                    .as("two pools of 4 MiB: cuda:1 was not started")
                    .isEqualTo(8 * MIB);
            Scheduler s = context.getBean(Scheduler.class);

            TaskGraph g = TaskGraph.named("placed");
            Task<Integer> onTwo = g.task("on-2")
                    .onGpu(2)
                    .gpu(ctx -> ctx.unwrap(GpuContext.class).deviceOrdinal());
            Task<String> onOne = g.task("on-1").onGpu(1).bodies(ctx -> "cpu", ctx -> "gpu");
            GraphRun run = s.execute(g);
            assertThat(run.result(onTwo)).isEqualTo(2);
            assertThat(run.result(onOne))
                    .as("cuda:1 is not HTS's: its CPU body runs")
                    .isEqualTo("cpu");
            assertThat(run.profile().tasks())
                    .filteredOn(t -> t.taskName().equals("on-1"))
                    .singleElement()
                    .extracting(t -> t.device())
                    .isEqualTo(Device.CPU);

            TaskGraph gpuOnly = TaskGraph.named("gpu-only-on-1");
            gpuOnly.task("k").onGpu(1).gpu(ctx -> 1);
            assertThatThrownBy(() -> s.execute(gpuOnly))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(GpuUnavailableException.class)
                    .hasMessageContaining("pinned to cuda:1");
        });
    }

    @Test
    void withoutDevicesEveryGpuOfTheHostStarts() {
        cuda.withDevices(3);
        runner.run(context -> assertThat(context.getBean(MultiGpuBackend.class).devices())
                .extracting(b -> b.deviceInfo().ordinal())
                .containsExactly(0, 1, 2));
    }

    /**
     * Invalid values fail start-up naming the property, on a host whose GPU would start, before any
     * device work: nothing stays allocated on the device.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            hts.gpu.streams-per-device=0            | hts.gpu.streams-per-device
            hts.gpu.streams-per-device=many         | hts.gpu.streams-per-device
            hts.gpu.spin-while-busy=sometimes       | hts.gpu.spin-while-busy
            hts.gpu.memory-pool.initial=-1MB        | hts.gpu.memory-pool.initial
            hts.gpu.memory-pool.maximum=2MB         | hts.gpu.memory-pool.maximum
            hts.gpu.memory-pool.maximum=1GB         | hts.gpu.memory-pool.maximum
            hts.gpu.memory-pool.arena-size=3MB      | hts.gpu.memory-pool.arena-size
            hts.gpu.memory-pool.minimum-block=100B  | hts.gpu.memory-pool.minimum-block
            hts.gpu.memory-pool.minimum-block=8MB   | hts.gpu.memory-pool.arena-size
            hts.gpu.devices=5                       | hts.gpu.devices
            hts.gpu.devices=1,1                     | hts.gpu.devices
            hts.gpu.devices=-1                      | hts.gpu.devices
            hts.gpu.devices=first                   | hts.gpu.devices
            """)
    void anInvalidValueFailsStartUpNamingTheProperty(String setting, String property) {
        cuda.withDevices(2);
        runner.withPropertyValues(setting).run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis report = new HtsFailureAnalyzer().analyze(context.getStartupFailure());
            if (report == null) {
                report = new HtsBindFailureAnalyzer().analyze(context.getStartupFailure());
            }
            assertThat(report).as(setting).isNotNull();
            assertThat(report.getDescription()).as(setting).contains("for property '" + property + "'");
            assertThat(report.getAction()).contains(property + " accepts");
        });
        assertThat(cuda.allocatedBytes()).as("no device memory left behind").isZero();
    }

    @Test
    void theBackendIsTheApplicationsWhenItDeclaresOneAndTheSimulatedDeviceIsNotStarted() {
        DeviceBackend own = new SimulatedCuda(64 * MIB).backend(1);
        runner.withBean("myGpu", DeviceBackend.class, () -> own).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(MultiGpuBackend.class);
            assertThat(cuda.allocatedBytes()).isZero();
        });
    }
}
