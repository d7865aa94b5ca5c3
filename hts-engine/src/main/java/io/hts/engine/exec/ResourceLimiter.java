package io.hts.engine.exec;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * Caps the concurrent use of named resources (I/O permits, GPU memory bytes, licences...).
 *
 * <p>A task that declares a demand becomes runnable only once every amount it asks for is free. A
 * task that must wait holds no thread: its continuation is queued here and run by whoever
 * releases enough. Waiters are served first-fit in arrival order, so small demands are not stuck
 * behind a large one; to keep a large demand from starving, a waiter that has been overtaken
 * {@value #MAX_OVERTAKES} times blocks everyone behind it (and new arrivals) until it fits.
 *
 * <p>One lock guards all amounts. Only tasks that declare resources come here, and the critical
 * sections are a few array operations; continuations run outside the lock.
 */
public final class ResourceLimiter {

    /**
     * The resource name for device memory in bytes: a GPU task that declares it is dispatched once
     * that much is free (and, with {@code MemoryShortage.RUN_ON_CPU}, runs its CPU body instead
     * of waiting).
     */
    public static final String GPU_MEMORY = "gpu-memory";


    static final int MAX_OVERTAKES = 16;

    private final String[] names;
    private final Map<String, Integer> indexByName;
    private final long[] capacity;
    private final long[] available;
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private final ReentrantLock lock = new ReentrantLock();

    /**
     * Creates a limiter.
     *
     * @param capacities each resource's capacity, in its own unit
     */
    public ResourceLimiter(Map<String, Long> capacities) {
        int n = capacities.size();
        this.names = new String[n];
        this.capacity = new long[n];
        this.available = new long[n];
        Map<String, Integer> index = new LinkedHashMap<>();
        int i = 0;
        for (Map.Entry<String, Long> e : capacities.entrySet()) {
            String name = Objects.requireNonNull(e.getKey(), "resource name");
            long cap = Objects.requireNonNull(e.getValue(), "capacity of " + name);
            if (cap < 0) {
                throw new IllegalArgumentException(
                        "capacity of resource '" + name + "' must be 0 or more, was " + cap);
            }
            names[i] = name;
            capacity[i] = cap;
            available[i] = cap;
            index.put(name, i++);
        }
        this.indexByName = Collections.unmodifiableMap(index);
    }

    /** A limiter with no resources. */
    public static ResourceLimiter none() {
        return new ResourceLimiter(Map.of());
    }

    /** The resource names, in declaration order. */
    public List<String> names() {
        return List.of(names);
    }

    /**
     * Resolves named amounts into a demand.
     *
     * @param amounts amount per resource name
     * @param owner what asks (a task name), for error messages
     * @return the demand
     * @throws IllegalArgumentException naming the resource when it is unknown, or when the amount
     *     is negative or larger than the capacity (the task could never run)
     */
    public ResourceDemand demand(Map<String, Long> amounts, String owner) {
        int[] idx = new int[amounts.size()];
        long[] amt = new long[amounts.size()];
        int i = 0;
        for (Map.Entry<String, Long> e : amounts.entrySet()) {
            Integer index = indexByName.get(e.getKey());
            if (index == null) {
                throw new IllegalArgumentException(owner + " asks for resource '" + e.getKey()
                        + "', which the scheduler does not have; configured resources: " + indexByName.keySet());
            }
            long amount = e.getValue();
            if (amount < 0 || amount > capacity[index]) {
                throw new IllegalArgumentException(owner + " asks for " + amount + " of resource '" + e.getKey()
                        + "'; accepted: 0 to its capacity " + capacity[index]);
            }
            idx[i] = index;
            amt[i++] = amount;
        }
        return new ResourceDemand(this, idx, amt);
    }

    /**
     * Takes the demand if it is free now; otherwise queues {@code onGranted}, which a later
     * {@link #release} runs (on its own thread) after taking the demand for it.
     *
     * @param demand what is needed
     * @param onGranted run once the demand has been taken for the caller, when not taken now
     * @return {@code true} when taken now ({@code onGranted} is then not used)
     */
    public boolean acquireOrWait(ResourceDemand demand, Runnable onGranted) {
        return acquire(demand, onGranted);
    }

    /**
     * Takes the demand if it is free now, without waiting.
     *
     * @param demand what is needed
     * @return whether it was taken
     */
    public boolean tryAcquire(ResourceDemand demand) {
        return acquire(demand, null);
    }

    /** Takes the demand if free; otherwise queues {@code onGranted} when given. */
    private boolean acquire(ResourceDemand demand, @Nullable Runnable onGranted) {
        check(demand);
        lock.lock();
        try {
            if (!blockedByStarvingWaiter() && fits(demand)) {
                take(demand);
                return true;
            }
            if (onGranted != null) {
                waiters.addLast(new Waiter(demand, onGranted));
            }
            return false;
        }
        finally {
            lock.unlock();
        }
    }

    /**
     * Returns a demand and starts the waiters that now fit.
     *
     * @param demand what was taken
     */
    public void release(ResourceDemand demand) {
        check(demand);
        List<Runnable> granted = null;
        lock.lock();
        try {
            for (int i = 0; i < demand.indices.length; i++) {
                int r = demand.indices[i];
                available[r] = Math.min(capacity[r], available[r] + demand.amounts[i]);
            }
            Iterator<Waiter> it = waiters.iterator();
            while (it.hasNext()) {
                Waiter w = it.next();
                if (fits(w.demand)) {
                    take(w.demand);
                    it.remove();
                    if (granted == null) {
                        granted = new ArrayList<>(2);
                    }
                    granted.add(w.onGranted);
                }
                else if (++w.overtaken >= MAX_OVERTAKES) {
                    break;
                }
            }
        }
        finally {
            lock.unlock();
        }
        if (granted != null) {
            for (Runnable r : granted) {
                r.run();
            }
        }
    }

    /**
     * Removes a queued waiter (its task was cancelled while waiting).
     *
     * @param onGranted the continuation given to {@link #acquireOrWait}
     * @return whether it was still waiting
     */
    public boolean cancelWaiting(Runnable onGranted) {
        lock.lock();
        try {
            return waiters.removeIf(w -> w.onGranted == onGranted);
        }
        finally {
            lock.unlock();
        }
    }

    /**
     * The capacity of a resource.
     *
     * @param name the resource
     * @return its capacity
     * @throws IllegalArgumentException when the resource is unknown
     */
    public long capacity(String name) {
        return capacity[require(name)];
    }

    /**
     * The amount of a resource free now.
     *
     * @param name the resource
     * @return the free amount
     * @throws IllegalArgumentException when the resource is unknown
     */
    public long available(String name) {
        int i = require(name);
        lock.lock();
        try {
            return available[i];
        }
        finally {
            lock.unlock();
        }
    }

    /** Tasks waiting for resources. */
    public int waiting() {
        lock.lock();
        try {
            return waiters.size();
        }
        finally {
            lock.unlock();
        }
    }

    int indexOf(String name) {
        Integer i = indexByName.get(name);
        return i == null ? -1 : i;
    }

    String nameOf(int index) {
        return names[index];
    }

    private int require(String name) {
        Integer i = indexByName.get(name);
        if (i == null) {
            throw new IllegalArgumentException(
                    "unknown resource '" + name + "'; configured resources: " + indexByName.keySet());
        }
        return i;
    }

    private void check(ResourceDemand demand) {
        if (demand.limiter() != this) {
            throw new IllegalArgumentException("the demand " + demand + " belongs to another limiter");
        }
    }

    private boolean blockedByStarvingWaiter() {
        for (Waiter w : waiters) {
            if (w.overtaken >= MAX_OVERTAKES) {
                return true;
            }
        }
        return false;
    }

    private boolean fits(ResourceDemand d) {
        for (int i = 0; i < d.indices.length; i++) {
            if (available[d.indices[i]] < d.amounts[i]) {
                return false;
            }
        }
        return true;
    }

    private void take(ResourceDemand d) {
        for (int i = 0; i < d.indices.length; i++) {
            available[d.indices[i]] -= d.amounts[i];
        }
    }

    private static final class Waiter {
        final ResourceDemand demand;
        final Runnable onGranted;
        int overtaken;

        Waiter(ResourceDemand demand, Runnable onGranted) {
            this.demand = demand;
            this.onGranted = onGranted;
        }
    }
}
