package io.hts.engine.exec.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.exec.internal.ResourceLimiter.Waiting;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ResourceLimiterTests {

    /** Capacities in the given order (Map.of has none). */
    private static Map<String, Long> caps(Object... nameThenCapacity) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < nameThenCapacity.length; i += 2) {
            m.put((String) nameThenCapacity[i], ((Number) nameThenCapacity[i + 1]).longValue());
        }
        return m;
    }

    /** Holds {@code small} and queues {@code big}, then skips it {@code times} times by small pairs. */
    private static void skip(ResourceLimiter limiter, ResourceDemand small, int times) {
        for (int i = 0; i < times; i++) {
            assertThat(limiter.tryAcquire(small)).as("small pair %d", i).isTrue();
            limiter.release(small);
        }
    }

    @Test
    void grantsWhileFreeThenQueuesAndServesWaitersOnRelease() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 2L));
        ResourceDemand one = limiter.demand(Map.of("io", 1L), "task 'a'");
        List<String> granted = new ArrayList<>();
        assertThat(limiter.acquireOrWait(one, () -> granted.add("x"))).isNull();
        assertThat(limiter.acquireOrWait(one, () -> granted.add("y"))).isNull();
        assertThat(limiter.available("io")).isZero();
        assertThat(limiter.acquireOrWait(one, () -> granted.add("first waiter")))
                .isNotNull();
        assertThat(limiter.acquireOrWait(one, () -> granted.add("second waiter")))
                .isNotNull();
        assertThat(limiter.waiting()).isEqualTo(2);
        limiter.release(one);
        assertThat(granted).containsExactly("first waiter");
        limiter.release(one);
        assertThat(granted).containsExactly("first waiter", "second waiter");
        assertThat(limiter.waiting()).isZero();
        limiter.release(one);
        limiter.release(one);
        assertThat(limiter.available("io")).isEqualTo(2);
        limiter.checkInvariants();
    }

    @Test
    void takesMultiResourceDemandsAllOrNothing() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 1L, "gpu-memory", 1000L));
        ResourceDemand both = limiter.demand(Map.of("io", 1L, "gpu-memory", 600L), "task 'a'");
        ResourceDemand memory = limiter.demand(Map.of("gpu-memory", 600L), "task 'b'");
        assertThat(limiter.tryAcquire(memory)).isTrue();
        assertThat(limiter.tryAcquire(both)).isFalse();
        assertThat(limiter.available("io"))
                .as("nothing taken by a failed all-or-nothing attempt")
                .isOne();
        limiter.release(memory);
        assertThat(limiter.tryAcquire(both)).isTrue();
    }

    @Test
    void smallDemandsOvertakeALargeOneOnlyBoundedTimes() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("mem", 10L));
        ResourceDemand big = limiter.demand(Map.of("mem", 10L), "task 'big'");
        ResourceDemand small = limiter.demand(Map.of("mem", 1L), "task 'small'");
        assertThat(limiter.tryAcquire(small)).isTrue();
        List<String> granted = new ArrayList<>();
        assertThat(limiter.acquireOrWait(big, () -> granted.add("big"))).isNotNull();
        int overtakes = 0;
        while (limiter.acquireOrWait(small, () -> granted.add("small")) == null) {
            limiter.release(small);
            overtakes++;
            if (overtakes > 1000) {
                break;
            }
        }
        assertThat(overtakes)
                .as("small arrivals stop overtaking a starving waiter")
                .isEqualTo(ResourceLimiter.MAX_OVERTAKES);
        limiter.release(small);
        assertThat(granted).containsExactly("big");
        limiter.release(big);
        assertThat(granted).containsExactly("big", "small");
        limiter.release(small);
        assertThat(limiter.available("mem")).isEqualTo(10);
    }

    @Test
    void rejectsUnknownResourcesAndImpossibleAmountsNamingTheTask() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 2L));
        assertThatThrownBy(() -> limiter.demand(Map.of("disk", 1L), "task 'load'"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task 'load'")
                .hasMessageContaining("'disk'")
                .hasMessageContaining("[io]");
        assertThatThrownBy(() -> limiter.demand(Map.of("io", 3L), "task 'load'"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task 'load'")
                .hasMessageContaining("capacity 2");
        assertThatThrownBy(() -> new ResourceLimiter(Map.of("io", -1L)))
                .hasMessageContaining("'io'")
                .hasMessageContaining("-1");
    }

    // ------------------------------------------------ a. a starving waiter blocks only its resources

    /** Regression (a): the old limiter refused every arrival once any waiter starved. */
    @Test
    void aStarvingWaiterDoesNotBlockArrivalsThatNeedOtherResources() {
        ResourceLimiter limiter = new ResourceLimiter(caps("mem", 10, "io", 1));
        ResourceDemand big = limiter.demand(Map.of("mem", 10L), "task 'big'");
        ResourceDemand small = limiter.demand(Map.of("mem", 1L), "task 'small'");
        ResourceDemand io = limiter.demand(Map.of("io", 1L), "task 'io'");
        assertThat(limiter.tryAcquire(small)).isTrue();
        List<String> granted = new ArrayList<>();
        assertThat(limiter.acquireOrWait(big, () -> granted.add("big"))).isNotNull();
        skip(limiter, small, ResourceLimiter.MAX_OVERTAKES);
        assertThat(limiter.tryAcquire(small))
                .as("the big waiter starves: mem is closed to arrivals")
                .isFalse();

        assertThat(limiter.tryAcquire(io))
                .as("io is free and the starving waiter does not need it")
                .isTrue();
        assertThat(limiter.acquireOrWait(io, () -> granted.add("io waiter"))).isNotNull();
        assertThat(limiter.acquireOrWait(small, () -> granted.add("small waiter")))
                .isNotNull();
        limiter.release(io);
        assertThat(granted).as("a later waiter on another resource is served").containsExactly("io waiter");
        limiter.release(small);
        assertThat(granted)
                .as("the starving waiter first, the later mem waiter behind it")
                .containsExactly("io waiter", "big");
        limiter.release(big);
        assertThat(granted).containsExactly("io waiter", "big", "small waiter");
        limiter.release(small);
        limiter.release(io);
        assertThat(limiter.available("mem")).isEqualTo(10);
        assertThat(limiter.available("io")).isOne();
        limiter.checkInvariants();
    }

    @Test
    void aStarvingMultiResourceWaiterBlocksLaterWaitersOnEachOfItsResourcesButNotEarlierOnes() {
        ResourceLimiter limiter = new ResourceLimiter(caps("x", 2, "y", 2, "z", 1), 2);
        ResourceDemand x1 = limiter.demand(Map.of("x", 1L), "x1");
        ResourceDemand y1 = limiter.demand(Map.of("y", 1L), "y1");
        ResourceDemand z1 = limiter.demand(Map.of("z", 1L), "z1");
        ResourceDemand xy = limiter.demand(caps("x", 2, "y", 1), "xy");
        List<String> granted = new ArrayList<>();
        assertThat(limiter.tryAcquire(x1)).isTrue();
        assertThat(limiter.tryAcquire(x1)).isTrue();
        assertThat(limiter.tryAcquire(y1)).isTrue();
        assertThat(limiter.tryAcquire(y1)).isTrue();
        assertThat(limiter.tryAcquire(z1)).isTrue();
        assertThat(limiter.acquireOrWait(y1, () -> granted.add("early y"))).isNotNull();
        assertThat(limiter.acquireOrWait(xy, () -> granted.add("xy"))).isNotNull();
        limiter.release(x1); // x 1 free: xy skipped (1st)
        assertThat(limiter.tryAcquire(x1)).as("not starving yet").isTrue();
        limiter.release(x1); // skipped (2nd): starving
        assertThat(limiter.tryAcquire(x1)).as("x closed to arrivals").isFalse();
        assertThat(limiter.acquireOrWait(y1, () -> granted.add("late y"))).isNotNull();
        assertThat(limiter.acquireOrWait(z1, () -> granted.add("z"))).isNotNull();
        limiter.release(y1);
        assertThat(granted)
                .as("the earlier y waiter is not blocked; the later one is")
                .containsExactly("early y");
        limiter.release(z1);
        assertThat(granted).as("z is none of its resources").containsExactly("early y", "z");
        limiter.release(x1); // x 2, y 0 free: xy still does not fit
        assertThat(granted).containsExactly("early y", "z");
        limiter.release(y1); // y 1 free: xy fits, takes x 2 and y 1; the late y waiter finds y exhausted
        assertThat(granted).containsExactly("early y", "z", "xy");
        limiter.release(xy);
        assertThat(granted).containsExactly("early y", "z", "xy", "late y");
        limiter.checkInvariants();
    }

    // ------------------------------------------------ b. withdrawing a waiter

    /** Regression (b): the old limiter removed waiters by their continuation, every one sharing it. */
    @Test
    void aCancelledWaiterIsRemovedAtOnceAndNeverGranted() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 1L));
        ResourceDemand io = limiter.demand(Map.of("io", 1L), "task");
        AtomicInteger runs = new AtomicInteger();
        Runnable shared = runs::incrementAndGet;
        assertThat(limiter.tryAcquire(io)).isTrue();
        Waiting first = limiter.acquireOrWait(io, shared);
        Waiting second = limiter.acquireOrWait(io, shared);
        assertThat(first).isNotNull();
        assertThat(second).isNotNull();
        assertThat(first.cancel()).isTrue();
        assertThat(limiter.waiting()).as("only the withdrawn waiter leaves").isOne();
        assertThat(((ResourceWaiter) first).onGranted)
                .as("it keeps nothing alive")
                .isNull();
        assertThat(first.cancel()).as("withdrawing twice is harmless").isTrue();
        limiter.release(io);
        assertThat(runs)
                .as("the other waiter with the same continuation is granted once")
                .hasValue(1);
        assertThat(second.cancel()).as("too late: granted").isFalse();
        limiter.release(io);
        assertThat(runs).hasValue(1);
        assertThat(limiter.available("io")).isOne();
        assertThat(limiter.waiting()).isZero();
        limiter.checkInvariants();
    }

    @Test
    void cancellingAStarvingWaiterServesTheWaitersItBlockedOnTheCancellingThread() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("mem", 4L), 1);
        ResourceDemand all = limiter.demand(Map.of("mem", 4L), "all");
        ResourceDemand one = limiter.demand(Map.of("mem", 1L), "one");
        assertThat(limiter.tryAcquire(one)).isTrue();
        assertThat(limiter.tryAcquire(one)).isTrue();
        List<String> granted = new ArrayList<>();
        Waiting big = limiter.acquireOrWait(all, () -> granted.add("all"));
        limiter.release(one); // skipped once: starving
        Waiting small = limiter.acquireOrWait(
                one, () -> granted.add("one on " + Thread.currentThread().getName()));
        assertThat(small).isNotNull();
        assertThat(big.cancel()).isTrue();
        assertThat(granted).containsExactly("one on " + Thread.currentThread().getName());
        assertThat(small.cancel()).isFalse();
        limiter.release(one);
        limiter.release(one);
        assertThat(limiter.available("mem")).isEqualTo(4);
        limiter.checkInvariants();
    }

    @Test
    void cancelRacesTheGrantAndExactlyOneWins() throws Exception {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 1L));
        ResourceDemand io = limiter.demand(Map.of("io", 1L), "task");
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 10_000; round++) {
                assertThat(limiter.tryAcquire(io)).isTrue();
                AtomicInteger runs = new AtomicInteger();
                AtomicReference<Boolean> cancelled = new AtomicReference<>();
                Waiting w = limiter.acquireOrWait(io, () -> {
                    runs.incrementAndGet();
                    assertThat(cancelled.get())
                            .as("ran after its cancel returned true")
                            .isNotEqualTo(Boolean.TRUE);
                });
                assertThat(w).isNotNull();
                CyclicBarrier start = new CyclicBarrier(2);
                Future<?> releasing = threads.submit(() -> {
                    start.await();
                    limiter.release(io);
                    return null;
                });
                Future<Boolean> cancelling = threads.submit(() -> {
                    start.await();
                    boolean c = w.cancel();
                    cancelled.set(c);
                    return c;
                });
                boolean won = cancelling.get(10, TimeUnit.SECONDS);
                releasing.get(10, TimeUnit.SECONDS);
                assertThat(limiter.waiting()).isZero();
                if (won) {
                    assertThat(runs).as("withdrawn: never granted").hasValue(0);
                    assertThat(limiter.available("io")).isOne();
                } else {
                    assertThat(runs).as("granted: ran once").hasValue(1);
                    assertThat(limiter.available("io")).as("the grant holds it").isZero();
                    assertThat(w.cancel()).isFalse();
                    limiter.release(io);
                }
                limiter.checkInvariants();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    // ------------------------------------------------ c. the work of acquire and release

    /**
     * Regression (c): the old limiter scanned every waiter on each acquire and each release (and,
     * after {@code MAX_OVERTAKES} releases of io, refused io altogether: a).
     */
    @Test
    void acquireAndReleaseExamineNoWaiterOfAnotherResource() {
        ResourceLimiter limiter = new ResourceLimiter(caps("gpu", 1, "io", 1_000));
        ResourceDemand gpu = limiter.demand(Map.of("gpu", 1L), "gpu");
        ResourceDemand io = limiter.demand(Map.of("io", 1L), "io");
        assertThat(limiter.tryAcquire(gpu)).isTrue();
        for (int i = 0; i < 10_000; i++) {
            assertThat(limiter.acquireOrWait(gpu, () -> {})).isNotNull();
        }
        for (int i = 0; i < 1_000; i++) {
            assertThat(limiter.tryAcquire(io)).isTrue();
        }
        assertThat(limiter.examinedWaiters()).as("acquires").isZero();
        for (int i = 0; i < 1_000; i++) {
            limiter.release(io);
        }
        for (int i = 0; i < 1_000; i++) {
            assertThat(limiter.tryAcquire(io)).isTrue();
            limiter.release(io);
        }
        assertThat(limiter.examinedWaiters()).as("releases").isZero();
        assertThat(limiter.waiting()).isEqualTo(10_000);
    }

    @Test
    void releasesExamineEachWaiterAtMostMaxOvertakesTimesBeyondWhatTheyGrant() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("mem", 10L));
        ResourceDemand big = limiter.demand(Map.of("mem", 10L), "big");
        ResourceDemand small = limiter.demand(Map.of("mem", 1L), "small");
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.tryAcquire(small)).isTrue();
        }
        int waiters = 1_000;
        AtomicInteger granted = new AtomicInteger();
        for (int i = 0; i < waiters; i++) {
            assertThat(limiter.acquireOrWait(big, granted::incrementAndGet)).isNotNull();
        }
        int releases = 0;
        while (releases <= 1_000 && limiter.tryAcquire(small)) {
            limiter.release(small);
            releases++;
        }
        assertThat(releases).isEqualTo(ResourceLimiter.MAX_OVERTAKES);
        long examined = limiter.examinedWaiters();
        assertThat(examined)
                .as("each waiter skipped at most MAX_OVERTAKES times")
                .isLessThanOrEqualTo((long) waiters * ResourceLimiter.MAX_OVERTAKES);
        for (int i = 0; i < 4; i++) {
            limiter.release(small);
        }
        assertThat(limiter.examinedWaiters())
                .as("a release that grants nothing stops at the starving head")
                .isEqualTo(examined + 4);
        limiter.release(small);
        assertThat(granted).hasValue(1);
        assertThat(limiter.examinedWaiters())
                .as("the head granted, then mem is exhausted")
                .isEqualTo(examined + 5);
        for (int i = 0; i < 1_000; i++) {
            Waiting w = limiter.acquireOrWait(small, () -> {});
            assertThat(w.cancel()).isTrue();
        }
        assertThat(limiter.examinedWaiters())
                .as("queuing and withdrawing examine nobody")
                .isEqualTo(examined + 5);
        limiter.checkInvariants();
    }

    // ------------------------------------------------ d. releasing more than is taken

    /** Regression (d): the old limiter clamped the free amount to the capacity. */
    @Test
    void releasingMoreThanIsTakenThrowsNamingTheResourceAndAmounts() {
        ResourceLimiter limiter = new ResourceLimiter(caps("io", 2, "mem", 100));
        ResourceDemand io = limiter.demand(Map.of("io", 1L), "task");
        ResourceDemand both = limiter.demand(caps("io", 1, "mem", 40), "task");
        assertThat(limiter.tryAcquire(io)).isTrue();
        limiter.release(io);
        assertThatThrownBy(() -> limiter.release(io))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'io'")
                .hasMessageContaining("returns 1")
                .hasMessageContaining("only 0")
                .hasMessageContaining("capacity 2");
        assertThat(limiter.tryAcquire(io)).isTrue();
        assertThatThrownBy(() -> limiter.release(both))
                .as("mem was never taken")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'mem'")
                .hasMessageContaining("returns 40")
                .hasMessageContaining("only 0");
        assertThat(limiter.available("io"))
                .as("a refused release changes nothing")
                .isOne();
        assertThat(limiter.available("mem")).isEqualTo(100);
        limiter.release(io);
        limiter.checkInvariants();
    }

    // ------------------------------------------------ fairness across resources

    @Test
    void grantsTheFirstFitInArrivalOrderAcrossResources() {
        ResourceLimiter limiter = new ResourceLimiter(caps("x", 1, "y", 1));
        ResourceDemand x = limiter.demand(Map.of("x", 1L), "x");
        ResourceDemand y = limiter.demand(Map.of("y", 1L), "y");
        ResourceDemand xy = limiter.demand(caps("x", 1, "y", 1), "xy");
        assertThat(limiter.tryAcquire(xy)).isTrue();
        List<String> granted = new ArrayList<>();
        limiter.acquireOrWait(y, () -> granted.add("y (1st)"));
        limiter.acquireOrWait(xy, () -> granted.add("xy (2nd)"));
        limiter.acquireOrWait(x, () -> granted.add("x (3rd)"));
        limiter.release(xy);
        assertThat(granted)
                .as("the y waiter arrived first; xy does not fit after it; x does")
                .containsExactly("y (1st)", "x (3rd)");
        limiter.release(y);
        assertThat(granted).containsExactly("y (1st)", "x (3rd)");
        limiter.release(x);
        assertThat(granted).containsExactly("y (1st)", "x (3rd)", "xy (2nd)");
        limiter.release(xy);
        limiter.checkInvariants();
    }

    @Test
    void runsEveryGrantedContinuationWhenOneThrowsAndRethrowsTheFirst() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 2L));
        ResourceDemand two = limiter.demand(Map.of("io", 2L), "two");
        ResourceDemand one = limiter.demand(Map.of("io", 1L), "one");
        assertThat(limiter.tryAcquire(two)).isTrue();
        AtomicInteger ran = new AtomicInteger();
        limiter.acquireOrWait(one, () -> {
            ran.incrementAndGet();
            throw new IllegalArgumentException("first");
        });
        limiter.acquireOrWait(one, ran::incrementAndGet);
        assertThatThrownBy(() -> limiter.release(two)).hasMessage("first");
        assertThat(ran).hasValue(2);
        assertThat(limiter.available("io")).isZero();
        limiter.checkInvariants();
    }

    // ------------------------------------------------ randomized, concurrent

    /** One queued acquisition of the randomized test. */
    private static final class Queued {
        final ResourceDemand demand;
        final AtomicInteger runs = new AtomicInteger();
        volatile boolean cancelled;
        volatile Waiting handle;

        Queued(ResourceDemand demand) {
            this.demand = demand;
        }
    }

    @Test
    void randomConcurrentUseReturnsEverythingAndRunsEachGrantExactlyOnce() throws Exception {
        ResourceLimiter limiter = new ResourceLimiter(caps("a", 4, "b", 3, "c", 2, "d", 1), 3);
        List<ResourceDemand> demands = new ArrayList<>();
        SplittableRandom seeds = new SplittableRandom(20240607);
        for (int i = 0; i < 24; i++) {
            Map<String, Long> amounts = new LinkedHashMap<>();
            for (String r : limiter.names()) {
                if (seeds.nextInt(3) == 0) {
                    amounts.put(r, (long) seeds.nextInt((int) limiter.capacity(r) + 1));
                }
            }
            demands.add(limiter.demand(amounts, "demand " + i));
        }
        Queue<ResourceDemand> owned = new ConcurrentLinkedQueue<>();
        Queue<Queued> pending = new ConcurrentLinkedQueue<>();
        Queue<Queued> all = new ConcurrentLinkedQueue<>();
        Queue<String> violations = new ConcurrentLinkedQueue<>();
        int threadCount = 4;
        ExecutorService threads = Executors.newFixedThreadPool(threadCount);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            long seed = seeds.nextLong();
            done.add(threads.submit(() -> {
                SplittableRandom random = new SplittableRandom(seed);
                start.await();
                for (int op = 0; op < 100_000; op++) {
                    ResourceDemand d = demands.get(random.nextInt(demands.size()));
                    switch (random.nextInt(5)) {
                        case 0 -> {
                            if (limiter.tryAcquire(d)) {
                                owned.add(d);
                            }
                        }
                        case 1 -> {
                            Queued q = new Queued(d);
                            Waiting h = limiter.acquireOrWait(d, () -> {
                                if (q.cancelled || q.runs.incrementAndGet() != 1) {
                                    violations.add("granted after a successful cancel, or twice: " + q.demand);
                                }
                                owned.add(q.demand);
                            });
                            if (h == null) {
                                owned.add(d);
                            } else {
                                q.handle = h;
                                all.add(q);
                                pending.add(q);
                            }
                        }
                        case 2 -> {
                            Queued q = pending.poll();
                            if (q != null && q.handle.cancel()) {
                                q.cancelled = true;
                            }
                        }
                        default -> {
                            ResourceDemand r = owned.poll();
                            if (r != null) {
                                limiter.release(r);
                            }
                        }
                    }
                    if (op % 10_000 == 0) {
                        limiter.checkInvariants();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        try {
            for (Future<?> f : done) {
                f.get(90, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        for (Queued q; (q = pending.poll()) != null; ) {
            if (q.handle.cancel()) {
                q.cancelled = true;
            }
        }
        for (ResourceDemand r; (r = owned.poll()) != null; ) {
            limiter.release(r);
        }
        assertThat(violations).isEmpty();
        assertThat(limiter.waiting()).isZero();
        for (String r : limiter.names()) {
            assertThat(limiter.available(r)).as(r).isEqualTo(limiter.capacity(r));
        }
        List<Queued> queued = new ArrayList<>(all);
        long grantedLater = queued.stream().filter(q -> !q.cancelled).count();
        assertThat(queued).allSatisfy(q -> assertThat(q.runs).hasValue(q.cancelled ? 0 : 1));
        assertThat(queued)
                .allSatisfy(
                        q -> assertThat(((ResourceWaiter) q.handle).granted()).isEqualTo(!q.cancelled));
        assertThat(grantedLater).as("some waiters were granted").isPositive();
        assertThat(queued.size() - grantedLater).as("some were withdrawn").isPositive();
        limiter.checkInvariants();
    }
}
