package io.hts.gpu.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.support.SimulatedCuda;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The device memory pool over a simulated device. */
class DeviceMemoryPoolTests {

    private static final long MIB = 1L << 20;

    private final SimulatedCuda cuda = new SimulatedCuda(1L << 30);

    private DeviceMemoryPool pool(long initial, long maximum) {
        return new DeviceMemoryPool(cuda, 0, new PoolSettings(initial, maximum, 4 * MIB, 256));
    }

    @Test
    void thePoolGrowsByArenasUpToItsLimitThenFailsNamingTheLimit() {
        try (DeviceMemoryPool pool = pool(4 * MIB, 12 * MIB)) {
            assertThat(cuda.allocatedBytes()).isEqualTo(4 * MIB);
            List<DeviceBuffer> held = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(pool.allocate(4 * MIB));
            }
            MemoryStatistics s = pool.statistics();
            assertThat(s.arenas()).isEqualTo(3);
            assertThat(s.capacity()).isEqualTo(12 * MIB);
            assertThat(s.used()).isEqualTo(12 * MIB);
            assertThat(cuda.allocatedBytes()).isEqualTo(12 * MIB);
            assertThatExceptionOfType(MemoryExhaustedException.class)
                    .isThrownBy(() -> pool.allocate(1))
                    .withMessageContaining("cuda:0 cannot allocate 1 B within its limit of 12.0 MiB")
                    .withMessageContaining("hts.gpu.memory-pool.maximum")
                    .satisfies(ex -> assertThat(ex.statistics().failures()).isOne());
            held.forEach(DeviceBuffer::close);
            assertThat(pool.statistics().used()).isZero();
            assertThat(pool.statistics().highWaterMark()).isEqualTo(12 * MIB);
        }
        assertThat(cuda.allocatedBytes()).as("close returns every arena").isZero();
    }

    /** An initial size that is no multiple of the minimum block (90 % of a device) is reserved rounded down. */
    @Test
    void anInitialSizeThatIsNoMultipleOfTheMinimumBlockIsReservedRoundedDownToOne() {
        long ninetyPercent = 256 * MIB / 10 * 9; // 241,591,910 B: a multiple of 2 only
        try (DeviceMemoryPool pool =
                new DeviceMemoryPool(cuda, 0, new PoolSettings(ninetyPercent, ninetyPercent, 64 * MIB, 256))) {
            assertThat(pool.statistics().capacity()).isEqualTo(ninetyPercent / 256 * 256);
            assertThat(pool.statistics().capacity()).isLessThanOrEqualTo(ninetyPercent);
            assertThat(cuda.allocatedBytes()).isEqualTo(ninetyPercent / 256 * 256);
        }
        try (DeviceMemoryPool pool = pool(1000, 4 * MIB)) {
            assertThat(pool.statistics().capacity()).as("512 + 256").isEqualTo(768);
        }
    }

    @Test
    void aRequestLargerThanAnArenaGetsAnArenaOfItsOwn() {
        try (DeviceMemoryPool pool = pool(0, 64 * MIB)) {
            DeviceBuffer big = pool.allocate(20 * MIB);
            assertThat(big.bytes()).isEqualTo(20 * MIB);
            assertThat(pool.statistics().capacity()).isEqualTo(32 * MIB);
            big.close();
        }
    }

    /** A block released after stream work is reused only once that work has completed. */
    @Test
    void aBlockReleasedOnAStreamIsReusedOnlyAfterTheStreamsWorkHasCompleted() {
        cuda.autoRun(false);
        try (DeviceMemoryPool pool = pool(4 * MIB, 4 * MIB)) {
            CudaApi.Stream stream = cuda.createStream();
            DeviceBuffer first = pool.allocate(4 * MIB);
            cuda.fill(first.address(), (byte) 1, 4 * MIB, stream);
            first.closeAfter(stream);
            assertThat(pool.statistics().pendingFree()).isEqualTo(4 * MIB);
            assertThat(pool.statistics().free()).isZero();
            assertThat(cuda.queuedWork()).isOne();
            DeviceBuffer second = pool.allocate(4 * MIB); // must wait for the fill to complete
            assertThat(cuda.queuedWork())
                    .as("the work that used the block ran before its reuse")
                    .isZero();
            assertThat(second.address()).isEqualTo(first.address());
            assertThat(pool.statistics().pendingFree()).isZero();
            second.close();
        }
    }

    @Test
    void whileABlockIsPendingThePoolGrowsInsteadOfWaitingWhenItMay() {
        cuda.autoRun(false);
        try (DeviceMemoryPool pool = pool(4 * MIB, 8 * MIB)) {
            CudaApi.Stream stream = cuda.createStream();
            DeviceBuffer first = pool.allocate(4 * MIB);
            cuda.fill(first.address(), (byte) 1, 16, stream);
            first.closeAfter(stream);
            DeviceBuffer second = pool.allocate(4 * MIB);
            assertThat(second.address()).isNotEqualTo(first.address());
            assertThat(cuda.queuedWork()).as("nobody waited").isOne();
            cuda.runAll();
            assertThat(pool.reclaim(false)).isTrue();
            assertThat(pool.statistics().pendingFree()).isZero();
            second.close();
        }
    }

    @Test
    void releasedBlocksAreReusedBySizeAndFlushedBeforeThePoolGrows() {
        try (DeviceMemoryPool pool = pool(4 * MIB, 4 * MIB)) {
            DeviceBuffer a = pool.allocate(1000);
            long address = a.address();
            a.close();
            MemoryStatistics cached = pool.statistics();
            assertThat(cached.cachedFree()).isEqualTo(1024);
            assertThat(cached.free()).isEqualTo(4 * MIB);
            assertThat(cached.used()).isZero();
            assertThat(cached.liveBlocks()).isZero();
            assertThat(cached.requested()).isZero();
            DeviceBuffer again = pool.allocate(700); // same size class
            assertThat(again.address()).isEqualTo(address);
            again.close();
            List<DeviceBuffer> many = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                many.add(pool.allocate(64 * 1024));
            }
            many.forEach(DeviceBuffer::close);
            assertThat(pool.statistics().cachedFree()).isPositive();
            DeviceBuffer whole = pool.allocate(4 * MIB); // only possible once the cache is flushed
            assertThat(whole.bytes()).isEqualTo(4 * MIB);
            assertThat(pool.statistics().arenas()).isOne();
            whole.close();
        }
    }

    /** Eight threads through the striped cache and the buddies: no two live buffers ever overlap. */
    @Test
    void eightThreadsNeverHoldTheSameMemory() throws Exception {
        try (DeviceMemoryPool pool = pool(16 * MIB, 16 * MIB)) {
            LiveRanges live = new LiveRanges();
            java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(8);
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int seed = t;
                done.add(threads.submit(() -> {
                    java.util.Random random = new java.util.Random(seed);
                    List<DeviceBuffer> mine = new ArrayList<>();
                    for (int op = 0; op < 20_000; op++) {
                        if (!mine.isEmpty() && (random.nextBoolean() || mine.size() > 8)) {
                            DeviceBuffer b = mine.remove(random.nextInt(mine.size()));
                            live.remove(b);
                            b.close();
                        } else {
                            DeviceBuffer b = pool.allocate(256L << random.nextInt(8));
                            live.add(b);
                            mine.add(b);
                        }
                    }
                    mine.forEach(b -> {
                        live.remove(b);
                        b.close();
                    });
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> f : done) {
                f.get(60, java.util.concurrent.TimeUnit.SECONDS);
            }
            threads.shutdown();
            MemoryStatistics s = pool.statistics();
            assertThat(s.used()).isZero();
            assertThat(s.liveBlocks()).isZero();
            assertThat(s.failures()).isZero();
            assertThat(s.free()).isEqualTo(16 * MIB);
        }
    }

    @Test
    void aPoisonedPoolRefusesAllocationsWithTheErrorsName() {
        DeviceMemoryPool pool = pool(4 * MIB, 4 * MIB);
        DeviceBuffer b = pool.allocate(MIB);
        pool.poison("CUDA_ERROR_ILLEGAL_ADDRESS");
        assertThatIllegalStateException()
                .isThrownBy(() -> pool.allocate(1))
                .withMessage(
                        "the memory pool of cuda:0 is poisoned by CUDA_ERROR_ILLEGAL_ADDRESS and can no longer be used");
        b.close(); // accepted, never reused
        pool.close();
        assertThat(cuda.allocatedBytes())
                .as("a poisoned context's memory goes with the context")
                .isEqualTo(4 * MIB);
    }

    @Test
    void buffersAreReleasedOnceAndOnlyToTheirOwnPool() {
        try (DeviceMemoryPool pool = pool(4 * MIB, 4 * MIB);
                DeviceMemoryPool other = pool(4 * MIB, 4 * MIB)) {
            DeviceBuffer b = pool.allocate(MIB);
            b.close();
            b.close();
            assertThat(b.isReleased()).isTrue();
            assertThat(pool.statistics().used()).isZero();
            assertThat(b.toString()).contains("cuda:0", "1.0 MiB", "released");
            assertThat(other.statistics().used()).isZero();
        }
    }

    @Test
    void badSettingsNameThePropertyAndWhatIsAccepted() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new PoolSettings(0, 1 << 20, 1 << 20, 100))
                .withMessageContaining("hts.gpu.memory-pool.minimum-block must be a power of two of at least 256");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new PoolSettings(0, 1 << 20, 3 << 20, 256))
                .withMessageContaining("hts.gpu.memory-pool.arena-size must be a power of two");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new PoolSettings(8 << 20, 4 << 20, 1 << 20, 256))
                .withMessageContaining(
                        "hts.gpu.memory-pool.maximum (4194304) must be at least hts.gpu.memory-pool.initial (8388608)");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new PoolSettings(-1, 4 << 20, 1 << 20, 256))
                .withMessageContaining("hts.gpu.memory-pool.initial must be 0 or more");
    }

    /**
     * The free memory status() reports comes from counters (O(1), no lock) and always equals what
     * a full statistics snapshot gives, bounded by the device's free memory, through random
     * allocations, releases now, releases after stream work, and growth.
     */
    @Test
    void availableBytesFromCountersEqualsTheSnapshotThroughRandomUse() {
        cuda.autoRun(false);
        java.util.Random random = new java.util.Random(7);
        try (DeviceMemoryPool pool = pool(4 * MIB, 64 * MIB)) {
            CudaApi.Stream stream = cuda.createStream();
            List<DeviceBuffer> held = new ArrayList<>();
            for (int step = 0; step < 2_000; step++) {
                int action = random.nextInt(10);
                if (action < 5 || held.isEmpty()) {
                    DeviceBuffer b = pool.tryAllocate(1 + random.nextInt((int) (3 * MIB)));
                    if (b != null) {
                        held.add(b);
                    }
                } else if (action < 8) {
                    held.remove(random.nextInt(held.size())).close();
                } else if (action == 8) {
                    held.remove(random.nextInt(held.size())).closeAfter(stream);
                } else {
                    cuda.runAll();
                    pool.reclaim(false);
                }
                MemoryStatistics s = pool.statistics();
                long deviceFree = cuda.memoryInfo()[0];
                long expected = s.free() + Math.min(Math.max(0, 64 * MIB - s.capacity()), deviceFree);
                assertThat(pool.availableBytes()).as("step %d: %s", step, s).isEqualTo(expected);
            }
            held.forEach(DeviceBuffer::close);
            cuda.runAll();
        } finally {
            cuda.autoRun(true);
        }
    }

    /** A limit above the device's memory is refused, naming the property, the device's memory and what is accepted. */
    @Test
    void aLimitAboveTheDevicesMemoryIsRefusedNamingTheDevicesMemory() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> pool(4 * MIB, 4L << 30))
                .withMessageContaining("hts.gpu.memory-pool.maximum of 4.0 GiB")
                .withMessageContaining("1.0 GiB of memory of cuda:0")
                .withMessageContaining("at most the device's memory");
        assertThat(cuda.allocatedBytes()).isZero();
    }

    /** A request larger than the device blames the device, and free memory never exceeds what the device can give. */
    @Test
    void aRequestLargerThanTheDeviceNamesTheDeviceAndFreeMemoryIsWhatTheDeviceCanGive() {
        try (DeviceMemoryPool pool = pool(4 * MIB, 1L << 30)) {
            assertThatExceptionOfType(MemoryExhaustedException.class)
                    .isThrownBy(() -> pool.allocate(2L << 30))
                    .withMessageContaining("cannot allocate 2.0 GiB: cuda:0 has 1.0 GiB of memory in all");
            long other = cuda.allocate(900 * MIB); // another user of the device
            try {
                DeviceBuffer grows = pool.allocate(8 * MIB); // the pool learns the device's free memory as it grows
                assertThat(pool.availableBytes()).isLessThanOrEqualTo(cuda.memoryInfo()[0] + 4 * MIB);
                assertThatExceptionOfType(MemoryExhaustedException.class)
                        .isThrownBy(() -> pool.allocate(200 * MIB))
                        .withMessageContaining("free (other contexts or processes hold the rest)");
                grows.close();
            } finally {
                cuda.free(other);
            }
        }
    }

    /** whenReleased runs once the memory is back: at once after close, after the stream work for closeAfter. */
    @Test
    void actionsOnReleaseRunWhenTheMemoryIsBackInThePool() {
        cuda.autoRun(false);
        try (DeviceMemoryPool pool = pool(4 * MIB, 4 * MIB)) {
            CudaApi.Stream stream = cuda.createStream();
            java.util.concurrent.atomic.AtomicInteger now = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger later = new java.util.concurrent.atomic.AtomicInteger();
            DeviceBuffer a = pool.allocate(MIB);
            DeviceBuffer b = pool.allocate(MIB);
            cuda.fill(b.address(), (byte) 1, MIB, stream);
            assertThat(a.whenReleased(now::incrementAndGet)).isTrue();
            assertThat(b.whenReleased(later::incrementAndGet)).isTrue();
            a.close();
            a.close();
            assertThat(now.get()).isOne();
            b.closeAfter(stream);
            pool.reclaim(false);
            assertThat(later.get()).as("the stream work still uses it").isZero();
            cuda.runAll();
            pool.reclaim(false);
            assertThat(later.get()).isOne();
            a.whenReleased(now::incrementAndGet);
            assertThat(now.get()).as("added after the return: runs at once").isEqualTo(2);
        } finally {
            cuda.autoRun(true);
        }
    }

    /** The address ranges of the live buffers; adding one that overlaps another fails the test. */
    private static final class LiveRanges {

        private final java.util.TreeMap<Long, Long> ends = new java.util.TreeMap<>();

        synchronized void add(DeviceBuffer b) {
            long start = b.address();
            long end = start + b.bytes();
            var below = ends.floorEntry(start);
            assertThat(below == null || below.getValue() <= start)
                    .as(
                            "[%d, %d) overlaps the live [%d, %d)",
                            start, end, below == null ? 0 : below.getKey(), below == null ? 0 : below.getValue())
                    .isTrue();
            Long above = ends.ceilingKey(start);
            assertThat(above == null || above >= end)
                    .as("[%d, %d) overlaps a live buffer at %d", start, end, above)
                    .isTrue();
            ends.put(start, end);
        }

        synchronized void remove(DeviceBuffer b) {
            assertThat(ends.remove(b.address()))
                    .as("a live buffer at %d", b.address())
                    .isEqualTo(b.address() + b.bytes());
        }
    }
}
