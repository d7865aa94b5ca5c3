package io.hts.autoconfigure.support;

import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.PoolSettings;
import io.hts.gpu.support.SimulatedCuda;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** A GPU backend bean on the simulated device: 64 MiB, a pool of 4 to 16 MiB in 4 MiB arenas. */
@Configuration(proxyBeanMethods = false)
public class SimulatedGpuConfiguration {

    private static final long MIB = 1L << 20;

    @Bean
    GpuBackend simulatedGpu() {
        return new SimulatedCuda(64 * MIB)
                .backend(GpuSettings.defaults(16 * MIB).withMemory(new PoolSettings(4 * MIB, 16 * MIB, 4 * MIB, 256)));
    }
}
