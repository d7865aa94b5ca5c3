package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.hts.autoconfigure.support.SimulatedGpus;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class HtsGpuAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsGpuAutoConfiguration.class, HtsAutoConfiguration.class));

    private static boolean gpuHere() {
        return GpuDiscoverer.driver().discover().available();
    }

    @Test
    void withoutHtsGpuOnTheClassPathEverythingRunsOnTheCpu() {
        runner.withClassLoader(new FilteredClassLoader(GpuBackend.class)).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(DeviceBackend.class);
            assertThat(context.getBean(Scheduler.class).gpu()).isEmpty();
        });
    }

    @Test
    void disabledMeansNoGpuBackendEvenWhereThereIsAGpu() {
        runner.withPropertyValues("hts.gpu.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(DeviceBackend.class);
            assertThat(context.getBean(Scheduler.class).gpu()).isEmpty();
        });
    }

    @Test
    void autoUsesAGpuOnlyWhereOneIsFound() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            if (gpuHere()) {
                assertThat(context).hasSingleBean(io.hts.gpu.exec.MultiGpuBackend.class);
                assertThat(context.getBean(Scheduler.class).gpu()).isPresent();
            } else {
                assertThat(context).doesNotHaveBean(DeviceBackend.class);
            }
        });
    }

    @Test
    void requiredButAbsentFailsStartUpSayingWhy() {
        assumeFalse(gpuHere(), "this machine has a GPU: nothing is absent"); // reported skipped there, not passed
        runner.withPropertyValues("hts.gpu.enabled=true").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .isInstanceOf(InvalidHtsPropertyException.class)
                    .hasMessageContaining("hts.gpu.enabled")
                    .hasMessageContaining("without a usable GPU")
                    .hasMessageContaining(GpuDiscoverer.driver().discover().reason());
        });
    }

    /** The settings each device gets come from the hts.gpu.* properties as a user writes them. */
    @Test
    void pollSpinAndSpinWhileBusyReachTheDevicesSettings() {
        DeviceInfo h200 = new DeviceInfo(0, "NVIDIA H200", 140L << 30, 9, 0, 132);
        new ApplicationContextRunner()
                .withUserConfiguration(PropertiesOnly.class)
                .withPropertyValues("hts.gpu.poll-spin=20ms", "hts.gpu.spin-while-busy=true")
                .run(context -> {
                    GpuSettings s = HtsGpuAutoConfiguration.settings(
                            context.getBean(HtsProperties.class).getGpu(), h200);
                    assertThat(s.pollSpin()).isEqualTo(Duration.ofMillis(20));
                    assertThat(s.spinWhileBusy()).isTrue();
                });
        new ApplicationContextRunner()
                .withUserConfiguration(PropertiesOnly.class)
                .run(context -> assertThat(HtsGpuAutoConfiguration.settings(
                                        context.getBean(HtsProperties.class).getGpu(), h200)
                                .pollSpin())
                        .isEqualTo(Duration.ofNanos(50_000)));
        new ApplicationContextRunner()
                .withUserConfiguration(PropertiesOnly.class)
                .withPropertyValues("hts.gpu.poll-spin=3650000d")
                .run(context -> assertThat(HtsGpuAutoConfiguration.settings(
                                        context.getBean(HtsProperties.class).getGpu(), h200)
                                .pollSpinNanos())
                        .isEqualTo(GpuSettings.MAX_POLL_SPIN.toNanos()));
        new ApplicationContextRunner()
                .withUserConfiguration(PropertiesOnly.class)
                .withPropertyValues("hts.gpu.poll-spin=-1ms")
                .run(context -> assertThatThrownBy(() -> HtsPropertiesValidator.validate(
                                context.getBean(HtsProperties.class), context.getEnvironment()))
                        .isInstanceOf(InvalidHtsPropertyException.class)
                        .hasMessageContaining("hts.gpu.poll-spin")
                        .hasMessageContaining("0 or more"));
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(HtsProperties.class)
    static class PropertiesOnly {}

    @Test
    void anApplicationsDeviceBackendWins() {
        runner.withUserConfiguration(OwnBackend.class)
                .withPropertyValues("hts.gpu.enabled=true")
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(DeviceBackend.class)
                            .doesNotHaveBean(GpuBackend.class);
                    assertThat(context.getBean(Scheduler.class).gpu())
                            .get()
                            .isInstanceOfSatisfying(
                                    CircuitBreakingBackend.class,
                                    guarded -> assertThat(guarded.delegate())
                                            .isSameAs(context.getBean(DeviceBackend.class)));
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBackend {

        @Bean
        DeviceBackend myGpu() {
            return new FakeGpuBackend(1);
        }
    }

    @Test
    void hts_gpu_devicesChoosesGpusByOrdinalAndNamesTheOnesThereAre() {
        java.util.List<io.hts.gpu.cuda.DeviceInfo> found = java.util.List.of(
                new io.hts.gpu.cuda.DeviceInfo(0, "a", 1L << 30, 9, 0, 4),
                new io.hts.gpu.cuda.DeviceInfo(1, "b", 1L << 30, 9, 0, 4));
        assertThat(HtsGpuAutoConfiguration.selected(found, null)).isEqualTo(found);
        assertThat(HtsGpuAutoConfiguration.selected(found, java.util.List.of(1)))
                .extracting(io.hts.gpu.cuda.DeviceInfo::ordinal)
                .containsExactly(1);
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> HtsGpuAutoConfiguration.selected(found, java.util.List.of(2)))
                .isInstanceOf(InvalidHtsPropertyException.class)
                .hasMessageContaining("hts.gpu.devices")
                .hasMessageContaining("ordinals of this host's GPUs [0, 1]");
    }

    /** An application's discoverer, declared as GpuDiscoverer's Javadoc says, decides where HTS looks for GPUs. */
    @Test
    void anApplicationsGpuDiscovererIsAskedOnceAndItsDevicesAreStarted() {
        DiscovererConfiguration.loads.set(0);
        runner.withUserConfiguration(DiscovererConfiguration.class)
                .withPropertyValues(SimulatedGpus.SMALL_POOL)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(io.hts.gpu.exec.MultiGpuBackend.class)
                                    .devices())
                            .extracting(b -> b.deviceInfo().name())
                            .containsExactly("Simulated GPU", "Simulated GPU");
                    assertThat(DiscovererConfiguration.loads)
                            .as("the condition and the bean share one discovery")
                            .hasValue(1);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class DiscovererConfiguration {

        static final java.util.concurrent.atomic.AtomicInteger loads = new java.util.concurrent.atomic.AtomicInteger();

        @Bean
        static GpuDiscoverer simulatedGpus() {
            return GpuDiscoverer.through(() -> {
                loads.incrementAndGet();
                return new io.hts.gpu.support.SimulatedCuda(256L << 20).withDevices(2);
            });
        }
    }

    @Test
    void aDiscovererThatFindsNoDeviceMeansNoGpuBackendWithAutoAndAFailedStartWithTrue() {
        ApplicationContextRunner none = runner.withBean(
                GpuDiscoverer.class,
                () -> GpuDiscoverer.through(() -> new io.hts.gpu.support.SimulatedCuda(1L << 20).withDevices(0)));
        none.run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(DeviceBackend.class);
            assertThat(context.getBean(Scheduler.class).gpu()).isEmpty();
        });
        none.withPropertyValues("hts.gpu.enabled=true")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .isInstanceOf(InvalidHtsPropertyException.class)
                        .hasMessageContaining("hts.gpu.enabled")
                        .hasMessageContaining("the CUDA driver reports no device"));
    }

    @Test
    void disabledAsksNoDiscoverer() {
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        runner.withBean(GpuDiscoverer.class, () -> () -> {
                    asked.incrementAndGet();
                    throw new AssertionError("not to be asked");
                })
                .withPropertyValues("hts.gpu.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(DeviceBackend.class);
                    assertThat(asked).hasValue(0);
                });
    }

    @Test
    void twoDiscoverersFailStartUpRatherThanOneBeingPickedSilently() {
        runner.withBean(
                        "one",
                        GpuDiscoverer.class,
                        () -> GpuDiscoverer.through(() -> new io.hts.gpu.support.SimulatedCuda(1L << 30)))
                .withBean(
                        "two",
                        GpuDiscoverer.class,
                        () -> GpuDiscoverer.through(() -> new io.hts.gpu.support.SimulatedCuda(1L << 30)))
                .run(context -> assertThat(context)
                        .getFailure()
                        .hasStackTraceContaining(GpuDiscoverer.class.getName())
                        .rootCause()
                        .isInstanceOf(org.springframework.beans.factory.NoUniqueBeanDefinitionException.class));
    }
}
