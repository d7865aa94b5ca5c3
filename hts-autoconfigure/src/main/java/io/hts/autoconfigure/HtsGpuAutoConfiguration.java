package io.hts.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.hts.engine.exec.DeviceBackend;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.memory.PoolSettings;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Auto-configuration of the GPU backend (module {@code hts-gpu}) on every CUDA device of the host
 * ({@code hts.gpu.devices} to choose), a {@link MultiGpuBackend} of one {@link GpuBackend} per device, when
 * hts-gpu is on the class path and {@code hts.gpu.enabled} allows it ({@link OnUsableGpuCondition}).
 * The scheduler of {@link HtsAutoConfiguration} picks the backend up. {@code hts.gpu.enabled=true}
 * without a usable device fails start-up naming the property and the reason.
 */
@AutoConfiguration(before = HtsAutoConfiguration.class)
@ConditionalOnClass(GpuBackend.class)
@EnableConfigurationProperties(HtsProperties.class)
public final class HtsGpuAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(DeviceBackend.class)
    @Conditional(OnUsableGpuCondition.class)
    MultiGpuBackend htsGpuBackend(HtsProperties properties) {
        HtsProperties.Gpu gpu = properties.getGpu();
        GpuDiscovery.Result found = OnUsableGpuCondition.discovery();
        CudaApi api = found.api();
        if (!found.available() || api == null) {
            throw new InvalidHtsPropertyException("hts.gpu.enabled", "true",
                    "auto or false on a machine without a usable GPU (" + found.reason() + ")");
        }
        if (gpu.getStreamsPerDevice() < 1) {
            throw new InvalidHtsPropertyException("hts.gpu.streams-per-device", gpu.getStreamsPerDevice(),
                    "an integer of at least 1");
        }
        List<DeviceInfo> devices = selected(found.devices(), gpu.getDevices());
        List<GpuBackend> started = new ArrayList<>();
        try {
            for (DeviceInfo device : devices) {
                started.add(new GpuBackend(api, device, settings(gpu, device), true));
            }
        }
        catch (RuntimeException ex) {
            started.forEach(GpuBackend::close);
            throw ex;
        }
        return new MultiGpuBackend(started, api);
    }

    static List<DeviceInfo> selected(List<DeviceInfo> found, @Nullable List<Integer> wanted) {
        if (wanted == null || wanted.isEmpty()) {
            return found;
        }
        List<DeviceInfo> out = new ArrayList<>();
        for (int ordinal : wanted) {
            DeviceInfo d = found.stream().filter(x -> x.ordinal() == ordinal).findFirst().orElseThrow(
                    () -> new InvalidHtsPropertyException("hts.gpu.devices", wanted, "ordinals of this host's GPUs "
                            + found.stream().map(x -> String.valueOf(x.ordinal())).toList()));
            if (!out.contains(d)) {
                out.add(d);
            }
        }
        return out;
    }

    private static GpuSettings settings(HtsProperties.Gpu gpu, DeviceInfo device) {
        HtsProperties.MemoryPool pool = gpu.getMemoryPool();
        long maximum = pool.getMaximum() != null ? pool.getMaximum().toBytes() : device.totalMemory() / 10 * 9;
        PoolSettings memory;
        try {
            memory = new PoolSettings(Math.min(pool.getInitial().toBytes(), maximum), maximum,
                    pool.getArenaSize().toBytes(), pool.getMinimumBlock().toBytes());
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidHtsPropertyException("hts.gpu.memory-pool", ex.getMessage(),
                    "sizes as the message says (initial <= maximum, powers of two for arena-size and minimum-block)");
        }
        return GpuSettings.defaults(maximum).withStreams(gpu.getStreamsPerDevice()).withMemory(memory)
                .withSpinWhileBusy(gpu.isSpinWhileBusy());
    }
}
