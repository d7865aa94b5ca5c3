package io.hts.autoconfigure;

import io.hts.engine.exec.DeviceBackend;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.PoolSettings;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Auto-configuration of the GPU backend (module {@code hts-gpu}) on the first CUDA device, when
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
    GpuBackend htsGpuBackend(HtsProperties properties) {
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
        DeviceInfo device = found.devices().get(0);
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
        GpuSettings settings = GpuSettings.defaults(maximum).withStreams(gpu.getStreamsPerDevice()).withMemory(memory)
                .withSpinWhileBusy(gpu.isSpinWhileBusy());
        return new GpuBackend(api, device, settings, true);
    }
}
