package io.hts.gpu.memory;

import io.hts.gpu.support.SimulatedCuda;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

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
    void twoStagingBuffersNeverShareBytes() {
        PinnedStagingPool pool = new PinnedStagingPool(cuda, 1 << 16);
        PinnedStagingPool.Staging a = pool.acquire(4096);
        PinnedStagingPool.Staging b = pool.acquire(4096);
        a.buffer().put(0, (byte) 1);
        b.buffer().put(0, (byte) 2);
        assertThat(a.buffer().get(0)).isEqualTo((byte) 1);
        pool.close();
    }
}
