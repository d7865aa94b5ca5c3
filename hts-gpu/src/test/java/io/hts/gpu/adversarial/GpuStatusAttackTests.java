package io.hts.gpu.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.memory.PoolSettings;
import io.hts.gpu.support.SimulatedCuda;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Promise 6: the free memory a pool (and so GpuBackend.status()) reports never exceeds what the device can give. */
class GpuStatusAttackTests {

    private static final long MIB = 1L << 20;

    /**
     * Another user of the device (a second pool here; another process, cuBLAS workspaces or a body
     * calling ctx.cuda().allocate in real life) takes memory after the pool last asked the driver:
     * the backend's launcher asks again every 10 ms, so status() soon stops promising growth from
     * the stale figure; a pool on its own is told with refreshDeviceFree().
     */
    @Test
    void availableBytesNeverExceedsWhatTheDeviceCanStillGive() {
        SimulatedCuda cuda = new SimulatedCuda(256 * MIB);
        PoolSettings settings = new PoolSettings(4 * MIB, 200 * MIB, 4 * MIB, 256);
        GpuBackend gpu = cuda.backend(GpuSettings.defaults(200 * MIB).withMemory(settings));
        try (gpu;
                DeviceMemoryPool other = new DeviceMemoryPool(cuda, 0, settings)) {
            DeviceBuffer taken = other.allocate(128 * MIB);
            long freeInArenas = 4 * MIB;
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> gpu.status().freeMemoryBytes() <= freeInArenas + cuda.memoryInfo()[0]);
            try (DeviceMemoryPool alone =
                    new DeviceMemoryPool(cuda, 0, new PoolSettings(4 * MIB, 100 * MIB, 4 * MIB, 256))) {
                DeviceBuffer more = other.allocate(64 * MIB);
                alone.refreshDeviceFree();
                assertThat(alone.availableBytes()).isLessThanOrEqualTo(freeInArenas + cuda.memoryInfo()[0]);
                more.close();
            }
            taken.close();
        }
    }
}
