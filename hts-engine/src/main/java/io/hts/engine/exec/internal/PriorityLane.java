package io.hts.engine.exec.internal;

import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The pool's global lane for urgent work: a binary heap ordered by priority (higher first), then
 * estimated cost (shorter first), then arrival. Workers look here before their own deques, so a
 * high-priority task jumps every queued normal one.
 *
 * <p>The heap is guarded by a lock, which is fine because only prioritised (or, under
 * shortest-job-first, cost-ordered) tasks come here; the common path never touches it. A volatile
 * size lets workers skip the lane with a single read when it is empty.
 */
final class PriorityLane {

    private final ReentrantLock lock = new ReentrantLock();
    private Entry[] heap = new Entry[64];
    private int count;
    private long arrivals;
    private volatile int size;

    void add(PoolTask task, int priority, long cost) {
        lock.lock();
        try {
            if (count == heap.length) {
                heap = Arrays.copyOf(heap, count << 1);
            }
            Entry e = new Entry(task, priority, cost, arrivals++);
            int i = count++;
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (!before(e, heap[parent])) {
                    break;
                }
                heap[i] = heap[parent];
                i = parent;
            }
            heap[i] = e;
            size = count;
        } finally {
            lock.unlock();
        }
    }

    @Nullable
    PoolTask poll() {
        if (size == 0) {
            return null;
        }
        lock.lock();
        try {
            return count == 0 ? null : removeAt(0);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Withdraws a queued task (a submission that lost the race with the pool's shutdown).
     *
     * @return whether it was still queued
     */
    boolean remove(PoolTask task) {
        lock.lock();
        try {
            for (int i = 0; i < count; i++) {
                if (heap[i].task == task) {
                    removeAt(i);
                    return true;
                }
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Removes the entry at {@code i}, under the lock: the last entry fills the hole and moves down or up. */
    private PoolTask removeAt(int i) {
        Entry removed = heap[i];
        Entry last = heap[--count];
        heap[count] = null;
        if (i < count) {
            int half = count >>> 1;
            int at = i;
            while (at < half) {
                int child = 2 * at + 1;
                int right = child + 1;
                if (right < count && before(heap[right], heap[child])) {
                    child = right;
                }
                if (!before(heap[child], last)) {
                    break;
                }
                heap[at] = heap[child];
                at = child;
            }
            while (at > 0) {
                int parent = (at - 1) >>> 1;
                if (!before(last, heap[parent])) {
                    break;
                }
                heap[at] = heap[parent];
                at = parent;
            }
            heap[at] = last;
        }
        size = count;
        return removed.task;
    }

    int size() {
        return size;
    }

    private static boolean before(Entry a, Entry b) {
        if (a.priority != b.priority) {
            return a.priority > b.priority;
        }
        if (a.cost != b.cost) {
            return a.cost < b.cost;
        }
        return a.arrival < b.arrival;
    }

    private record Entry(PoolTask task, int priority, long cost, long arrival) {}
}
