package io.hts.engine.exec.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.exec.PoolStats;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class WorkStealingPoolTests {

    @Test
    void runsEveryTaskIncludingWorkCreatedByTasks() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.builder().threads(4).build()) {
            LongAdder leaves = new LongAdder();
            CountDownLatch done = new CountDownLatch(1 << 14);
            pool.submit(new Split(0, 1 << 14, leaves, done));
            assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(leaves.sum()).isEqualTo(1 << 14);
            assertThat(pool.stats().executed()).isGreaterThanOrEqualTo(1 << 14);
        }
    }

    @Test
    void idleWorkersStealFromABusyWorkersDeque() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.builder().threads(2).build()) {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch ranElsewhere = new CountDownLatch(1);
            AtomicInteger owner = new AtomicInteger(-1);
            pool.submit(new PoolTask() {
                @Override
                protected @Nullable PoolTask execute(Worker worker) {
                    owner.set(worker.index());
                    worker.push(new PoolTask() {
                        @Override
                        protected @Nullable PoolTask execute(Worker thief) {
                            if (thief.index() != owner.get()) {
                                ranElsewhere.countDown();
                            }
                            release.countDown();
                            return null;
                        }
                    });
                    awaitQuietly(release);
                    return null;
                }
            });
            assertThat(ranElsewhere.await(30, TimeUnit.SECONDS))
                    .as("the pushed task was stolen")
                    .isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.stats().steals() >= 1);
        }
    }

    @Test
    void continuationsRunOnTheSameWorkerWithoutRecursion() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.builder().threads(2).build()) {
            int length = 1_000_000;
            AtomicInteger workersSeen = new AtomicInteger(-1);
            CountDownLatch done = new CountDownLatch(1);
            int[] ran = {0};
            pool.submit(new Chain(length, ran, workersSeen, done));
            assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(ran[0]).isEqualTo(length);
            assertThat(workersSeen.get())
                    .as("every link ran on the first link's worker")
                    .isNotNegative();
        }
    }

    @Test
    void priorityLaneRunsBeforeQueuedWork() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.builder().threads(1).build()) {
            CountDownLatch blocked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
            pool.execute(() -> {
                blocked.countDown();
                awaitQuietly(release);
            });
            assertThat(blocked.await(10, TimeUnit.SECONDS)).isTrue();
            for (int i = 0; i < 5; i++) {
                int n = i;
                pool.execute(() -> order.add("normal-" + n));
            }
            pool.submitPriority(task(() -> order.add("low")), 1, 10);
            pool.submitPriority(task(() -> order.add("high")), 5, 10);
            pool.submitPriority(task(() -> order.add("high-cheap")), 5, 1);
            CountDownLatch last = new CountDownLatch(1);
            pool.execute(last::countDown);
            release.countDown();
            assertThat(last.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(List.copyOf(order))
                    .containsExactly(
                            "high-cheap", "high", "low", "normal-0", "normal-1", "normal-2", "normal-3", "normal-4");
        }
    }

    @Test
    void idlePoolParksItsWorkersAndUsesNoMeasurableCpu() {
        try (WorkStealingPool pool = WorkStealingPool.builder().threads(2).build()) {
            CountDownLatch done = new CountDownLatch(100);
            for (int i = 0; i < 100; i++) {
                pool.execute(done::countDown);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> done.getCount() == 0);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> pool.threads().stream().allMatch(t -> t.getState() == Thread.State.WAITING));
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            long before = pool.threads().stream()
                    .mapToLong(t -> mx.getThreadCpuTime(t.getId()))
                    .sum();
            long parksBefore = pool.stats().workers().stream()
                    .mapToLong(PoolStats.WorkerStats::parks)
                    .sum();
            // Let some time pass without any work, then check the workers did not wake.
            await().pollDelay(Duration.ofMillis(300))
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> true);
            long after = pool.threads().stream()
                    .mapToLong(t -> mx.getThreadCpuTime(t.getId()))
                    .sum();
            long parksAfter = pool.stats().workers().stream()
                    .mapToLong(PoolStats.WorkerStats::parks)
                    .sum();
            assertThat(parksAfter).as("no worker woke up").isEqualTo(parksBefore);
            assertThat(pool.threads()).allMatch(t -> t.getState() == Thread.State.WAITING);
            assertThat(after - before).as("CPU time of idle workers, ns").isLessThan(5_000_000);
        }
    }

    @Test
    void shutdownFinishesQueuedWorkRejectsExternalWorkAndEndsTheThreads() throws Exception {
        WorkStealingPool pool = WorkStealingPool.builder().threads(2).build();
        LongAdder ran = new LongAdder();
        for (int i = 0; i < 10_000; i++) {
            pool.execute(ran::increment);
        }
        pool.shutdown();
        assertThatThrownBy(() -> pool.execute(ran::increment))
                .isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("shut down");
        assertThat(pool.awaitTermination(Duration.ofSeconds(30))).isTrue();
        assertThat(ran.sum()).isEqualTo(10_000);
        assertThat(pool.threads()).allMatch(t -> !t.isAlive());
        assertThat(pool.isTerminated()).isTrue();
    }

    @Test
    void aThrowingTaskGoesToTheHandlerAndTheWorkerGoesOn() throws Exception {
        ConcurrentLinkedQueue<Throwable> reported = new ConcurrentLinkedQueue<>();
        try (WorkStealingPool pool = WorkStealingPool.builder()
                .threads(1)
                .taskFailureHandler((t, ex) -> reported.add(ex))
                .build()) {
            pool.execute(() -> {
                throw new IllegalStateException("boom");
            });
            CountDownLatch after = new CountDownLatch(1);
            pool.execute(after::countDown);
            assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(reported).singleElement().satisfies(ex -> assertThat(ex).hasMessage("boom"));
        }
    }

    @Test
    void rejectsAnInvalidThreadCount() {
        assertThatThrownBy(() -> WorkStealingPool.builder().threads(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("threads")
                .hasMessageContaining("was 0");
    }

    static PoolTask task(Runnable r) {
        return new PoolTask() {
            @Override
            protected @Nullable PoolTask execute(Worker worker) {
                r.run();
                return null;
            }
        };
    }

    static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Splits a range in halves down to single leaves. */
    private static final class Split extends PoolTask {
        private final int from;
        private final int to;
        private final LongAdder leaves;
        private final CountDownLatch done;

        Split(int from, int to, LongAdder leaves, CountDownLatch done) {
            this.from = from;
            this.to = to;
            this.leaves = leaves;
            this.done = done;
        }

        @Override
        protected @Nullable PoolTask execute(Worker worker) {
            if (to - from == 1) {
                leaves.increment();
                done.countDown();
                return null;
            }
            int mid = (from + to) >>> 1;
            worker.push(new Split(mid, to, leaves, done));
            return new Split(from, mid, leaves, done);
        }
    }

    /** A chain of continuations, each link handing the next back to its worker. */
    private static final class Chain extends PoolTask {
        private final int left;
        private final int[] ran;
        private final AtomicInteger worker;
        private final CountDownLatch done;

        Chain(int left, int[] ran, AtomicInteger worker, CountDownLatch done) {
            this.left = left;
            this.ran = ran;
            this.worker = worker;
            this.done = done;
        }

        @Override
        protected @Nullable PoolTask execute(Worker w) {
            if (worker.get() < 0) {
                worker.set(w.index());
            } else if (worker.get() != w.index()) {
                worker.set(Integer.MIN_VALUE);
            }
            ran[0]++;
            if (left == 1) {
                done.countDown();
                return null;
            }
            return new Chain(left - 1, ran, worker, done);
        }
    }
}
