package io.hts.gpu.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BuddyAllocatorTests {

    private static final long MIN = 256;

    @Test
    void requestsAreRoundedUpToPowerOfTwoBlocks() {
        BuddyAllocator a = new BuddyAllocator(1 << 20, MIN);
        assertThat(a.maxOrder()).isEqualTo(12);
        assertThat(a.orderFor(1)).isZero();
        assertThat(a.orderFor(256)).isZero();
        assertThat(a.orderFor(257)).isOne();
        assertThat(a.orderFor(1 << 20)).isEqualTo(12);
        assertThat(a.orderFor((1 << 20) + 1)).isEqualTo(13);
        assertThat(a.blockSize(3000)).isEqualTo(4096);
        MemoryBlock b = a.allocate(3000);
        assertThat(b.size()).isEqualTo(4096);
        assertThat(b.requested()).isEqualTo(3000);
        assertThat(b.offset() % b.size()).isZero();
        MemoryStatistics s = a.statistics();
        assertThat(s.used()).isEqualTo(4096);
        assertThat(s.requested()).isEqualTo(3000);
        assertThat(s.internalFragmentation()).isCloseTo(1 - 3000.0 / 4096, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(s.liveBlocks()).isOne();
    }

    /** Random allocate/free sequences: blocks never overlap, statistics add up, and all frees coalesce. */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 42, 1234567})
    void randomSequencesKeepTheInvariantsAndCoalesceBackToOneBlock(long seed) {
        Random random = new Random(seed);
        long capacity = 1L << 24;
        BuddyAllocator a = new BuddyAllocator(capacity, MIN);
        List<MemoryBlock> live = new ArrayList<>();
        long peak = 0;
        for (int step = 0; step < 20_000; step++) {
            if (!live.isEmpty() && (random.nextInt(100) < 45 || a.statistics().free() < capacity / 16)) {
                a.free(live.remove(random.nextInt(live.size())));
            } else {
                long bytes = 1 + (long) (Math.pow(2, random.nextDouble() * 16));
                MemoryBlock b = a.tryAllocate(bytes);
                if (b != null) {
                    assertThat(b.size()).isGreaterThanOrEqualTo(bytes).isEqualTo(a.blockSize(bytes));
                    assertThat(b.offset() % b.size()).isZero();
                    assertThat(b.offset() + b.size()).isLessThanOrEqualTo(capacity);
                    live.add(b);
                } else {
                    assertThat(a.largestFreeBlock()).isLessThan(a.blockSize(bytes));
                }
            }
            long used = live.stream().mapToLong(MemoryBlock::size).sum();
            peak = Math.max(peak, used);
            if (step % 500 == 0) {
                assertNoOverlap(live);
                MemoryStatistics s = a.statistics();
                assertThat(s.used()).isEqualTo(used);
                assertThat(s.requested())
                        .isEqualTo(
                                live.stream().mapToLong(MemoryBlock::requested).sum());
                assertThat(s.liveBlocks()).isEqualTo(live.size());
                assertThat(s.free()).isEqualTo(capacity - used);
                assertThat(s.largestFreeBlock()).isLessThanOrEqualTo(s.free());
                assertThat(s.externalFragmentation()).isBetween(0.0, 1.0);
            }
        }
        assertNoOverlap(live);
        assertThat(a.statistics().highWaterMark()).isEqualTo(peak);
        live.forEach(a::free);
        assertThat(a.isFullyFree()).isTrue();
        MemoryStatistics s = a.statistics();
        assertThat(s.used()).isZero();
        assertThat(s.requested()).isZero();
        assertThat(s.largestFreeBlock()).isEqualTo(capacity);
        assertThat(s.externalFragmentation()).isZero();
        assertThat(a.allocate(capacity).offset()).isZero();
    }

    private static void assertNoOverlap(List<MemoryBlock> blocks) {
        List<MemoryBlock> sorted = new ArrayList<>(blocks);
        sorted.sort(Comparator.comparingLong(MemoryBlock::offset));
        for (int i = 1; i < sorted.size(); i++) {
            MemoryBlock prev = sorted.get(i - 1);
            assertThat(sorted.get(i).offset())
                    .as("%s overlaps %s", sorted.get(i), prev)
                    .isGreaterThanOrEqualTo(prev.offset() + prev.size());
        }
    }

    @Test
    void exhaustionIsATypedExceptionWithTheStatistics() {
        BuddyAllocator a = new BuddyAllocator(1 << 16, MIN);
        MemoryBlock all = a.allocate(1 << 16);
        assertThatExceptionOfType(MemoryExhaustedException.class)
                .isThrownBy(() -> a.allocate(1))
                .satisfies(ex -> {
                    assertThat(ex.requested()).isOne();
                    assertThat(ex.statistics().free()).isZero();
                    assertThat(ex.statistics().largestFreeBlock()).isZero();
                    assertThat(ex.statistics().failures()).isOne();
                    assertThat(ex.getMessage()).contains("cannot allocate 1 B", "used 64.0 KiB of 64.0 KiB");
                });
        assertThat(a.tryAllocate((1 << 16) + 1)).isNull();
        a.free(all);
        assertThat(a.statistics().failures()).isEqualTo(2);
        assertThat(a.statistics().highWaterMark()).isEqualTo(1 << 16);
    }

    @Test
    void fragmentationIsReportedAndTellsWhyALargeBlockIsRefused() {
        BuddyAllocator a = new BuddyAllocator(1 << 16, MIN);
        List<MemoryBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 256; i++) {
            blocks.add(a.allocate(MIN));
        }
        for (int i = 0; i < 256; i += 2) {
            a.free(blocks.get(i));
        }
        MemoryStatistics s = a.statistics();
        assertThat(s.free()).isEqualTo(1 << 15);
        assertThat(s.largestFreeBlock()).isEqualTo(MIN);
        assertThat(s.externalFragmentation())
                .isCloseTo(1 - 256.0 / (1 << 15), org.assertj.core.data.Offset.offset(1e-9));
        assertThatExceptionOfType(MemoryExhaustedException.class)
                .isThrownBy(() -> a.allocate(2 * MIN))
                .withMessageContaining("largest free block 256 B")
                .withMessageContaining("32.0 KiB");
        for (int i = 1; i < 256; i += 2) {
            a.free(blocks.get(i));
        }
        assertThat(a.isFullyFree()).isTrue();
    }

    @Test
    void doubleAndForeignFreesAreRefusedWithoutCorruptingTheArena() {
        BuddyAllocator a = new BuddyAllocator(1 << 16, MIN);
        BuddyAllocator other = new BuddyAllocator(1 << 16, MIN);
        MemoryBlock b = a.allocate(1000);
        a.free(b);
        assertThatIllegalStateException().isThrownBy(() -> a.free(b)).withMessageContaining("freed twice");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> other.free(a.allocate(10)))
                .withMessageContaining("another allocator");
        assertThat(a.statistics().liveBlocks()).isOne();
    }

    @Test
    void badGeometryIsRefusedWithWhatWouldBeAccepted() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new BuddyAllocator(1 << 20, 300))
                .withMessageContaining("minimum block must be a power of two, was 300");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new BuddyAllocator(3 << 20, 256))
                .withMessageContaining("capacity must be a power of two");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new BuddyAllocator(128, 256))
                .withMessageContaining("at least the minimum block (256)");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new BuddyAllocator(1L << 40, 256))
                .withMessageContaining("at most 2^30")
                .withMessageContaining("raise the minimum block");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new BuddyAllocator(1 << 20, 256).allocate(0))
                .withMessageContaining("at least 1 byte");
    }

    /**
     * Eight threads allocate and free at random; each claims the minimum blocks its block covers
     * in a shared ownership array, so any overlap between two live blocks fails a CAS at once.
     */
    @Test
    void eightThreadsNeverReceiveOverlappingBlocks() throws Exception {
        long capacity = 1L << 25;
        BuddyAllocator a = new BuddyAllocator(capacity, MIN);
        AtomicIntegerArray owner = new AtomicIntegerArray((int) (capacity / MIN));
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Long>> results = new ArrayList<>();
        for (int t = 1; t <= threads; t++) {
            int id = t;
            results.add(pool.submit(() -> {
                Random random = new Random(id);
                List<MemoryBlock> mine = new ArrayList<>();
                long failures = 0;
                start.await();
                for (int op = 0; op < 30_000; op++) {
                    if (!mine.isEmpty() && (random.nextBoolean() || mine.size() > 40)) {
                        MemoryBlock b = mine.remove(random.nextInt(mine.size()));
                        release(owner, b, id);
                        a.free(b);
                    } else {
                        MemoryBlock b = a.tryAllocate(1 + random.nextInt(16 * 1024));
                        if (b == null) {
                            failures++;
                            continue;
                        }
                        claim(owner, b, id);
                        mine.add(b);
                    }
                }
                for (MemoryBlock b : mine) {
                    release(owner, b, id);
                    a.free(b);
                }
                return failures;
            }));
        }
        start.countDown();
        long failures = 0;
        for (Future<Long> f : results) {
            failures += f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        // at most 8 x 41 blocks of at most 16 KiB are live (5.1 MiB of 32 MiB): a refusal would be spurious
        assertThat(failures).isZero();
        assertThat(a.isFullyFree()).isTrue();
        MemoryStatistics s = a.statistics();
        assertThat(s.used()).isZero();
        assertThat(s.liveBlocks()).isZero();
        assertThat(s.allocations()).isPositive();
        assertThat(s.largestFreeBlock()).isEqualTo(capacity);
    }

    private static void claim(AtomicIntegerArray owner, MemoryBlock b, int id) {
        int first = (int) (b.offset() / MIN);
        for (int i = 0; i < b.size() / MIN; i++) {
            int previous = owner.compareAndExchange(first + i, 0, id);
            if (previous != 0) {
                throw new AssertionError(b + " given to thread " + id + " overlaps a block of thread " + previous);
            }
        }
    }

    private static void release(AtomicIntegerArray owner, MemoryBlock b, int id) {
        int first = (int) (b.offset() / MIN);
        for (int i = 0; i < b.size() / MIN; i++) {
            if (!owner.compareAndSet(first + i, id, 0)) {
                throw new AssertionError(b + " of thread " + id + " was overwritten");
            }
        }
    }
}
