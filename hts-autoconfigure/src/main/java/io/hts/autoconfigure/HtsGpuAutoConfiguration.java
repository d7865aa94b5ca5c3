package io.hts.autoconfigure;

import io.hts.engine.exec.DeviceBackend;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.exec.GpuStartup;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.exec.PartialGpuBackend;
import io.hts.gpu.exec.UnusableGpuBackend;
import io.hts.gpu.memory.MemoryStatistics;
import io.hts.gpu.memory.PoolSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of the GPU backend (module {@code hts-gpu}) on every CUDA device of the host
 * ({@code hts.gpu.devices} to choose), a {@link MultiGpuBackend} of one {@link GpuBackend} per device, when
 * hts-gpu is on the class path and {@code hts.gpu.enabled} allows it ({@link OnUsableGpuCondition}).
 * The scheduler of {@link HtsAutoConfiguration} picks the backend up. The devices are found by the
 * application's {@link GpuDiscoverer} bean when it declares one (a simulated device in tests), else
 * through the NVIDIA driver; the backends start through {@link GpuStartup}, hts-gpu's one start loop,
 * each device with the settings of {@code hts.gpu.streams-per-device}, {@code hts.gpu.memory-pool.*},
 * {@code hts.gpu.spin-while-busy} and {@code hts.gpu.poll-spin}.
 *
 * <p>A GPU that is there but cannot be started (its backend throws while starting, e.g. on a
 * sticky CUDA error, or discovery counts devices it then cannot query) does not stop the
 * application with {@code hts.gpu.enabled=auto}: it gets a DOWN {@link UnusableGpuBackend} with the
 * reason, logged once as a warning, and tasks with a CPU body run on the CPU; where other GPUs of the
 * host start, they are used and the backend ({@link PartialGpuBackend}) is DEGRADED. The bean is
 * therefore declared as a {@link DeviceBackend}. {@code hts.gpu.enabled=true} fails start-up
 * naming the property, the device and the error when any selected GPU cannot be started, or when
 * there is no usable GPU.
 */
@AutoConfiguration(before = HtsAutoConfiguration.class)
@ConditionalOnClass(GpuBackend.class)
@EnableConfigurationProperties(HtsProperties.class)
public final class HtsGpuAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(HtsGpuAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean(DeviceBackend.class)
    @Conditional(OnUsableGpuCondition.class)
    DeviceBackend htsGpuBackend(
            HtsProperties properties, Environment environment, ObjectProvider<GpuDiscoverer> discoverer) {
        HtsPropertiesValidator.validate(
                properties, environment); // before any GPU work: bad values fail whatever the machine
        GpuProperties gpu = properties.getGpu();
        boolean required = gpu.getEnabled() == GpuProperties.GpuEnablement.TRUE;
        GpuDiscovery.Result found =
                OnUsableGpuCondition.discover(discoverer.getIfAvailable(GpuDiscoverer::driver)); // as the condition's
        CudaApi api = found.api();
        if (!found.available() || api == null) {
            if (required || !found.presentButUnusable()) {
                throw new InvalidHtsPropertyException(
                        "hts.gpu.enabled",
                        "true",
                        "auto or false on a machine without a usable GPU (" + found.reason() + ")");
            }
            UnusableGpuBackend down = UnusableGpuBackend.undiscovered(found);
            log.warn(
                    "HTS GPU backend DOWN, tasks with a CPU body run on the CPU and GPU-only tasks fail: {}",
                    down.reason());
            return down;
        }
        GpuStartup startup =
                GpuStartup.start(api, selected(found.devices(), gpu.getDevices()), d -> settings(gpu, d), true);
        if (startup.complete()) {
            return startup.backend();
        }
        if (required) {
            startup.close();
            throw new InvalidHtsPropertyException(
                    "hts.gpu.enabled",
                    "true",
                    "auto or false while a GPU cannot be started (" + startup.reasons() + ")",
                    startup.firstCause().orElse(null));
        }
        Optional<MultiGpuBackend> running = startup.running();
        if (running.isEmpty()) {
            log.warn(
                    "HTS GPU backend DOWN, tasks with a CPU body run on the CPU and GPU-only tasks fail: {}",
                    startup.reasons());
        } else {
            log.warn(
                    "HTS GPU backend DEGRADED, running on {} only; tasks pinned to the other GPUs run on the CPU or fail: {}",
                    running.get().name(),
                    startup.reasons());
        }
        return startup.backend();
    }

    static List<DeviceInfo> selected(List<DeviceInfo> found, @Nullable List<Integer> wanted) {
        if (wanted == null || wanted.isEmpty()) {
            return found;
        }
        List<DeviceInfo> out = new ArrayList<>();
        for (int ordinal : wanted) {
            DeviceInfo d = found.stream()
                    .filter(x -> x.ordinal() == ordinal)
                    .findFirst()
                    .orElseThrow(() -> new InvalidHtsPropertyException(
                            "hts.gpu.devices",
                            wanted,
                            "ordinals of this host's GPUs "
                                    + found.stream()
                                            .map(x -> String.valueOf(x.ordinal()))
                                            .toList()));
            if (!out.contains(d)) {
                out.add(d);
            }
        }
        return out;
    }

    static GpuSettings settings(GpuProperties gpu, DeviceInfo device) {
        GpuProperties.MemoryPool pool = gpu.getMemoryPool();
        long maximum = pool.getMaximum() != null ? pool.getMaximum().toBytes() : device.totalMemory() / 10 * 9;
        if (maximum > device.totalMemory()) {
            // a configuration error, not a GPU fault: fails start-up with auto too
            throw new InvalidHtsPropertyException(
                    "hts.gpu.memory-pool.maximum",
                    MemoryStatistics.bytes(maximum),
                    "at most the "
                            + MemoryStatistics.bytes(device.totalMemory()) + " of memory of " + device + ", such as "
                            + MemoryStatistics.bytes(device.totalMemory() / 10 * 9)
                            + " (90 %, the default when unset)");
        }
        PoolSettings memory;
        try {
            memory = new PoolSettings(
                    Math.min(pool.getInitial().toBytes(), maximum),
                    maximum,
                    pool.getArenaSize().toBytes(),
                    pool.getMinimumBlock().toBytes());
        } catch (IllegalArgumentException ex) {
            throw new InvalidHtsPropertyException(
                    "hts.gpu.memory-pool",
                    ex.getMessage(),
                    "sizes as the message says (initial <= maximum, powers of two for arena-size and minimum-block)");
        }
        return GpuSettings.defaults(maximum)
                .withStreams(gpu.getStreamsPerDevice())
                .withMemory(memory)
                .withSpinWhileBusy(gpu.isSpinWhileBusy())
                .withPollSpin(gpu.getPollSpin());
    }
}
