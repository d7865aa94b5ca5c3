package io.hts.engine.exec;

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
        }
        finally {
            lock.unlock();
        }
    }

    @Nullable PoolTask poll() {
        if (size == 0) {
            return null;
        }
        lock.lock();
        try {
            if (count == 0) {
                return null;
            }
            Entry first = heap[0];
            Entry last = heap[--count];
            heap[count] = null;
            if (count > 0) {
                int i = 0;
                int half = count >>> 1;
                while (i < half) {
                    int child = 2 * i + 1;
                    int right = child + 1;
                    if (right < count && before(heap[right], heap[child])) {
                        child = right;
                    }
                    if (!before(heap[child], last)) {
                        break;
                    }
                    heap[i] = heap[child];
                    i = child;
                }
                heap[i] = last;
            }
            size = count;
            return first.task;
        }
        finally {
            lock.unlock();
        }
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

    private record Entry(PoolTask task, int priority, long cost, long arrival) {
    }
}
