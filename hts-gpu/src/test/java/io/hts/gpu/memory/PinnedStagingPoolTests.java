package io.hts.gpu.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.hts.gpu.support.SimulatedCuda;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PinnedStagingPoolTests {

    private final SimulatedCuda cuda = new SimulatedCuda(1 << 20);

    @Test
    void stagingComesFromThePinnedArenaAndLargerRequestsPinMemoryOfTheirOwn() {
        PinnedStagingPool pool = new PinnedStagingPool(cuda, 1 << 16);
        assertThat(cuda.pinnedBuffers()).isOne();
        PinnedStagingPool.Staging small = pool.acquire(1000);
        assertThat(small.block()).isNotNull();
        assertThat(small.buffer().capacity()).isEqualTo(1000);
        assertThat(small.buffer().isDirect()).isTrue();
        assertThat(pool.statistics().used()).isEqualTo(4096);
        PinnedStagingPool.Staging large = pool.acquire(1 << 17);
        assertThat(large.block()).isNull();
        assertThat(cuda.pinnedBuffers()).isEqualTo(2);
        pool.release(large);
        pool.release(small);
        assertThat(cuda.pinnedBuffers()).isOne();
        assertThat(pool.statistics().used()).isZero();
        pool.close();
        assertThat(cuda.pinnedBuffers()).isZero();
        assertThatIllegalStateException().isThrownBy(() -> pool.acquire(1)).withMessageContaining("closed");
    }

    @Test
    void stagingBuffersLiveAtOnceNeverShareBytes() {
        PinnedStagingPool pool = new PinnedStagingPool(cuda, 1 << 16);
        int[] sizes = {4096, 4096, 1000, 8192, 1, 20_000};
        List<PinnedStagingPool.Staging> live = new ArrayList<>();
        for (int k = 0; k < sizes.length; k++) {
            PinnedStagingPool.Staging s = pool.acquire(sizes[k]);
            assertThat(s.buffer().capacity()).isGreaterThanOrEqualTo(sizes[k]);
            for (int i = 0; i < sizes[k]; i++) {
                s.buffer().put(i, (byte) (k + 1)); // every byte it was given
            }
            live.add(s);
        }
        for (int k = 0; k < sizes.length; k++) {
            ByteBuffer b = live.get(k).buffer();
            for (int i = 0; i < sizes[k]; i++) {
                assertThat(b.get(i)).as("byte %d of staging buffer %d", i, k).isEqualTo((byte) (k + 1));
            }
        }
        pool.close();
    }
}
