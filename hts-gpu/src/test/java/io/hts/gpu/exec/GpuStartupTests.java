package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.policy.DeviceHealth;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.memory.PoolSettings;
import io.hts.gpu.support.SimulatedCuda;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one start loop over a host's GPUs, on simulated devices. */
class GpuStartupTests {

    private static final long MIB = 1L << 20;

    private static final GpuSettings SETTINGS =
            GpuSettings.defaults(16 * MIB).withStreams(2).withMemory(new PoolSettings(4 * MIB, 16 * MIB, 4 * MIB, 256));

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    private List<DeviceInfo> devices(int n) {
        cuda.withDevices(n);
        return java.util.stream.IntStream.range(0, n).mapToObj(cuda::deviceInfo).toList();
    }

    @Test
    void everyGpuStartedIsOneMultiGpuBackendWithEachDevicesOwnSettings() {
        GpuStartup startup = GpuStartup.start(cuda, devices(2), d -> SETTINGS.withStreams(d.ordinal() + 1), false);
        try {
            assertThat(startup.complete()).isTrue();
            assertThat(startup.reasons()).isEmpty();
            assertThat(startup.firstCause()).isEmpty();
            DeviceBackend backend = startup.backend();
            assertThat(backend).isInstanceOfSatisfying(MultiGpuBackend.class, gpus -> {
                assertThat(gpus.devices())
                        .extracting(b -> b.deviceInfo().ordinal())
                        .containsExactly(0, 1);
                assertThat(gpus.devices())
                        .extracting(b -> b.settings().streams())
                        .containsExactly(1, 2);
                assertThat(gpus.status().capacity()).isEqualTo(3);
            });
        } finally {
            startup.close();
        }
        assertThat(cuda.allocatedBytes()).as("closed").isZero();
    }

    @Test
    void aGpuThatCannotStartIsDownAndTheOthersRunDegraded() {
        cuda.failNext("cuMemAlloc", 700); // cuda:0 starts first
        GpuStartup startup = GpuStartup.start(cuda, devices(2), d -> SETTINGS, false);
        try {
            assertThat(startup.complete()).isFalse();
            assertThat(startup.failed())
                    .singleElement()
                    .extracting(UnusableGpuBackend::ordinal)
                    .isEqualTo(0);
            assertThat(startup.reasons())
                    .startsWith("cuda:0 Simulated GPU could not be started")
                    .contains("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(startup.firstCause()).get().isInstanceOf(CudaException.class);
            assertThat(startup.backend()).isInstanceOfSatisfying(PartialGpuBackend.class, partial -> {
                assertThat(partial.status().health()).isEqualTo(DeviceHealth.DEGRADED);
                assertThat(partial.running())
                        .get()
                        .extracting(g -> g.devices().get(0).deviceInfo().ordinal())
                        .isEqualTo(1);
            });
        } finally {
            startup.close();
        }
    }

    @Test
    void theOneGpuThatCannotStartIsItsUnusableBackendAndSeveralArePartialAndDown() {
        cuda.failNext("cuMemAlloc", 2);
        GpuStartup one = GpuStartup.start(cuda, devices(1), d -> SETTINGS, false);
        assertThat(one.running()).isEmpty();
        assertThat(one.backend())
                .isInstanceOf(UnusableGpuBackend.class)
                .extracting(b -> b.status().health())
                .isEqualTo(DeviceHealth.DOWN);

        cuda.failNext("cuMemAlloc", 2); // cuda:0 fails allocating its pool
        cuda.failNext("cuStreamCreate", 2); // cuda:1 then fails creating its streams
        GpuStartup two = GpuStartup.start(cuda, devices(2), d -> SETTINGS, false);
        assertThat(two.running()).isEmpty();
        assertThat(two.failed()).extracting(UnusableGpuBackend::ordinal).containsExactly(0, 1);
        assertThat(two.backend()).isInstanceOfSatisfying(PartialGpuBackend.class, partial -> {
            assertThat(partial.status().health()).isEqualTo(DeviceHealth.DOWN);
            assertThat(partial.deviceStatuses()).hasSize(2);
        });
        assertThat(cuda.allocatedBytes())
                .as("what cuda:1 had allocated went back")
                .isZero();
    }

    @Test
    void settingsThatFailForAnyDeviceStartNothing() {
        List<DeviceInfo> two = devices(2);
        assertThatThrownBy(() -> GpuStartup.start(
                        cuda,
                        two,
                        d -> {
                            if (d.ordinal() == 1) {
                                throw new IllegalArgumentException("not for cuda:1");
                            }
                            return SETTINGS;
                        },
                        false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("not for cuda:1");
        assertThat(cuda.allocatedBytes()).as("cuda:0 was never started").isZero();
        assertThat(cuda.callsOf("cuStreamCreate")).isZero();
        assertThatThrownBy(() -> GpuStartup.start(cuda, List.of(), d -> SETTINGS, false))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
