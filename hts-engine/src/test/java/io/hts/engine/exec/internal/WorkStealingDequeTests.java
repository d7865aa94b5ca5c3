package io.hts.engine.exec.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class WorkStealingDequeTests {

    @Test
    void ownerPopsLifoAndThievesStealFifo() {
        WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();
        assertThat(deque.push(1))
                .as("push onto an empty deque reports the empty to non-empty transition")
                .isTrue();
        assertThat(deque.push(2)).isFalse();
        deque.push(3);
        assertThat(deque.size()).isEqualTo(3);
        assertThat(deque.steal()).isEqualTo(1);
        assertThat(deque.pop()).isEqualTo(3);
        assertThat(deque.pop()).isEqualTo(2);
        assertThat(deque.pop()).isNull();
        assertThat(deque.steal()).isNull();
        assertThat(deque.isEmpty()).isTrue();
        assertThat(deque.push(4)).as("empty again").isTrue();
    }

    @Test
    void growsBeyondItsInitialCapacityKeepingOrder() {
        WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();
        int initial = deque.capacity();
        for (int i = 0; i < initial * 4 + 3; i++) {
            deque.push(i);
        }
        assertThat(deque.capacity()).isGreaterThan(initial);
        assertThat(deque.steal()).isEqualTo(0);
        for (int i = initial * 4 + 2; i >= 1; i--) {
            assertThat(deque.pop()).isEqualTo(i);
        }
        assertThat(deque.pop()).isNull();
    }

    @Test
    void releasesReferencesToStolenElementsOnceEmpty() {
        WorkStealingDeque<Object> deque = new WorkStealingDeque<>();
        for (int i = 0; i < 100; i++) {
            deque.push(new Object());
        }
        for (int i = 0; i < 100; i++) {
            assertThat(deque.steal()).isNotNull();
        }
        assertThat(deque.pop()).isNull();
        assertThat(deque.retainedSlots())
                .as("stolen slots are cleared by the owner")
                .isZero();
    }

    @Test
    void oneOwnerAndSeveralThievesTakeEveryItemExactlyOnce() throws Exception {
        int items = 2_000_000;
        int thieves = 3;
        WorkStealingDeque<Integer> deque = new WorkStealingDeque<>();
        AtomicIntegerArray taken = new AtomicIntegerArray(items);
        AtomicLong count = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < thieves; t++) {
            Thread thief = new Thread(() -> {
                await(start);
                while (!done.get() || !deque.isEmpty()) {
                    Integer v = deque.steal();
                    if (v != null) {
                        taken.incrementAndGet(v);
                        count.incrementAndGet();
                    }
                }
            });
            threads.add(thief);
            thief.start();
        }
        start.countDown();
        // The owner pushes in bursts and pops some back, racing the thieves for the last element.
        int next = 0;
        while (next < items) {
            int burst = Math.min(1 + (next % 97), items - next);
            for (int i = 0; i < burst; i++) {
                deque.push(next++);
            }
            for (int i = 0; i < burst / 2; i++) {
                Integer v = deque.pop();
                if (v != null) {
                    taken.incrementAndGet(v);
                    count.incrementAndGet();
                }
            }
        }
        Integer v;
        while ((v = deque.pop()) != null) {
            taken.incrementAndGet(v);
            count.incrementAndGet();
        }
        done.set(true);
        for (Thread t : threads) {
            t.join();
        }
        assertThat(count.get()).isEqualTo(items);
        for (int i = 0; i < items; i++) {
            if (taken.get(i) != 1) {
                throw new AssertionError("item " + i + " was taken " + taken.get(i) + " times");
            }
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
