package io.hts.gpu.adversarial;

import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.memory.PoolSettings;
import io.hts.gpu.support.SimulatedCuda;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Promise 6: the free memory a pool (and so GpuBackend.status()) reports never exceeds what the device can give. */
class GpuStatusAttackTests {

    private static final long MIB = 1L << 20;

    /**
     * Another user of the device (a second pool here; another process, cuBLAS workspaces or a body
     * calling ctx.cuda().allocate in real life) takes memory after the pool last asked the driver:
     * availableBytes keeps promising growth from the stale figure (DeviceMemoryPool.deviceFree is
     * refreshed only when this pool grows or fails to).
     */
    @Test
    void availableBytesNeverExceedsWhatTheDeviceCanStillGive() {
        SimulatedCuda cuda = new SimulatedCuda(256 * MIB);
        PoolSettings settings = new PoolSettings(4 * MIB, 200 * MIB, 4 * MIB, 256);
        try (DeviceMemoryPool mine = new DeviceMemoryPool(cuda, 0, settings);
                DeviceMemoryPool other = new DeviceMemoryPool(cuda, 0, settings)) {
            DeviceBuffer taken = other.allocate(128 * MIB);
            long deviceFree = cuda.memoryInfo()[0];
            long freeInArenas = 4 * MIB;
            assertThat(mine.availableBytes()).as("device free %d MiB", deviceFree / MIB)
                    .isLessThanOrEqualTo(freeInArenas + deviceFree);
            taken.close();
        }
    }
}
