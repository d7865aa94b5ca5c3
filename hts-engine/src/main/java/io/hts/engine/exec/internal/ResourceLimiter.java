package io.hts.engine.exec.internal;

import io.hts.engine.exec.ResourceUsage;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Caps the concurrent use of named resources (I/O permits, GPU memory bytes, licences...).
 *
 * <p>A task that declares a demand becomes runnable only once every amount it asks for is free
 * (all or nothing over several resources). A task that must wait holds no thread: its
 * continuation is queued here and run by whoever releases enough. Waiters are served first-fit in
 * arrival order, so small demands are not stuck behind a large one; to keep a large demand from
 * starving, a waiter skipped {@value #MAX_OVERTAKES} times <em>starves</em>: it then blocks the
 * arrivals and the later waiters that need any of <em>its</em> resources (only those) until it
 * fits.
 */
public final class ResourceLimiter {

    /*
     * Invariants.
     *
     * Guarded by one lock; they hold whenever the lock is free.
     * <ol>
     *   <li>For each resource, {@code 0 <= available <= capacity}, and {@code capacity - available} is
     *       what the outstanding grants hold. A release that would return more than is taken throws
     *       {@link IllegalStateException} and changes nothing (no clamping hides a double release).
     *   <li>Every waiting waiter is linked, in arrival order, in the {@link WaiterQueue} of each
     *       resource it asks a positive amount of, and nowhere else; granted and withdrawn waiters are
     *       linked nowhere and keep no continuation (nothing keeps their task alive).
     *   <li>A waiter starves once it has been skipped {@code maxOvertakes} times, and then stays in the
     *       starving set of each of its queues until it leaves. A waiter is <em>blocked</em> when a
     *       starving waiter that arrived before it needs one of its resources; an arrival, when any
     *       starving waiter needs one of its resources.
     *   <li>No waiting waiter both fits and is unblocked: every change that could make one (a
     *       release; the withdrawal of a starving waiter) runs a grant pass before unlocking.
     *   <li>A waiter's state goes from waiting to granted or to withdrawn exactly once, written under
     *       the lock: the grant and {@link Waiting#cancel()} race for it there, and exactly one wins.
     * </ol>
     *
     * The grant pass.
     *
     * A release (or the withdrawal of a starving waiter) runs one forward sweep over the queues it may
     * unblock, merged by arrival order; {@link ResourceAdmission}, the sequential core that holds the
     * amounts and the queues, describes it.
     *
     * Locking.
     *
     * One {@link ReentrantLock} guards the {@link ResourceAdmission} (all amounts and queues): an
     * all-or-nothing demand spans several counters and the arrival order spans several queues, so
     * per-resource locks would need ordered multi-locking and would serialize on shared resources
     * anyway. The acquire paths hold it for O(k) array work and nothing blocks inside it; a monitor
     * would serve as well, but this lock's uncontended pair is a few ns cheaper on JDK 17. A
     * waiter's state is volatile and only written under the lock, so the {@code cancel()} of a
     * decided waiter answers without locking. Continuations never run under the lock: they run after
     * unlocking, on the thread whose release (or withdrawal of a starving waiter) granted them, in
     * arrival order, so they may call back in. When some throw, all still run and the first exception
     * is rethrown with the others suppressed (the resources stay taken for the continuations that
     * threw: they own them).
     *
     * Complexity.
     *
     * n waiters, k resources in a demand, R configured resources, s starving waiters of a resource.
     * <ul>
     *   <li>{@link #tryAcquire}, {@link #acquireOrWait}: O(k), whatever n (an amount and a starving
     *       mark per resource; queuing appends k nodes).
     *   <li>{@link #release}: O(k + R) plus the pass: O(R) to pick each examined waiter and O(k log s)
     *       per grant. The examined waiters are the granted ones, at most one stopping waiter per
     *       cursor, and skipped ones; a waiter can be skipped at most {@code maxOvertakes} times before
     *       it starves and stops every cursor that reaches it, so skips are an amortised constant per
     *       queued waiter. The work is bounded by the grants plus that amortised constant.
     *   <li>{@link Waiting#cancel()}: O(1) without the lock once decided; otherwise O(k), plus
     *       O(k log s) and a pass (whose grants run on the cancelling thread) for a starving waiter.
     *   <li>{@link #available}, {@link #waiting}: O(1) under the lock; {@link #capacity}: O(1).
     * </ul>
     */

    /** How many times a waiter can be skipped before it blocks the later demands on its resources. */
    static final int MAX_OVERTAKES = 16;

    private final String[] names;
    private final Map<String, Integer> indexByName;
    private final long[] capacity;
    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by lock. */
    private final ResourceAdmission admission;

    private final ResourceUsage view = new ResourceUsage() {
        @Override
        public List<String> names() {
            return ResourceLimiter.this.names();
        }

        @Override
        public long capacity(String name) {
            return ResourceLimiter.this.capacity(name);
        }

        @Override
        public long available(String name) {
            return ResourceLimiter.this.available(name);
        }

        @Override
        public int waiting() {
            return ResourceLimiter.this.waiting();
        }

        @Override
        public String toString() {
            return ResourceLimiter.this.toString();
        }
    };

    /** Creates a limiter with each resource's capacity, in its own unit. */
    public ResourceLimiter(Map<String, Long> capacities) {
        this(capacities, MAX_OVERTAKES);
    }

    /** A limiter whose waiters starve after {@code maxOvertakes} skips (tests use small values). */
    ResourceLimiter(Map<String, Long> capacities, int maxOvertakes) {
        if (maxOvertakes < 1) {
            throw new IllegalArgumentException("maxOvertakes must be 1 or more, was " + maxOvertakes);
        }
        int n = capacities.size();
        String[] names = new String[n];
        long[] capacity = new long[n];
        Map<String, Integer> index = new LinkedHashMap<>();
        int i = 0;
        for (Map.Entry<String, Long> e : capacities.entrySet()) {
            String name = Objects.requireNonNull(e.getKey(), "resource name");
            long cap = Objects.requireNonNull(e.getValue(), "capacity of " + name);
            if (cap < 0) {
                throw new IllegalArgumentException("capacity of resource '" + name + "' must be 0 or more, was " + cap);
            }
            names[i] = name;
            capacity[i] = cap;
            index.put(name, i++);
        }
        this.names = names;
        this.capacity = capacity;
        this.indexByName = Collections.unmodifiableMap(index);
        this.admission = new ResourceAdmission(names, capacity, maxOvertakes);
    }

    /** A limiter with no resources. */
    public static ResourceLimiter none() {
        return new ResourceLimiter(Map.of());
    }

    /**
     * What users see of this limiter ({@code Scheduler.resources()}): reads only, through an object
     * of its own, so that a cast cannot reach the limiter's acquire and release.
     */
    public ResourceUsage view() {
        return view;
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

    /** A queued acquisition, returned by {@link #acquireOrWait} when the demand was not free. */
    public interface Waiting {
        /**
         * Withdraws the waiter. Decided under the limiter's lock against the grant: exactly one of
         * them wins. Withdrawing a starving waiter may grant the waiters it blocked; their
         * continuations then run on the calling thread before this returns.
         *
         * @return {@code true} when it was still waiting (or already withdrawn): {@code onGranted}
         *     will never run and nothing is held for it; {@code false} when it was granted first:
         *     the demand has been taken for the caller, {@code onGranted} has run or is running, and
         *     the caller owns the demand (it must be released as for any grant)
         */
        boolean cancel();
    }

    /**
     * Takes the demand now and returns null, or queues {@code onGranted} and returns its handle. A
     * later {@link #release} takes the demand for the waiter and then runs {@code onGranted} on
     * the releasing thread, outside the lock.
     *
     * @param demand what is needed
     * @param onGranted run once the demand has been taken for the caller, when not taken now
     * @return {@code null} when taken now ({@code onGranted} is then not used), else the handle
     *     that can withdraw the waiter
     */
    public @Nullable Waiting acquireOrWait(ResourceDemand demand, Runnable onGranted) {
        check(demand);
        Objects.requireNonNull(onGranted, "onGranted");
        lock.lock();
        try {
            return admission.takeIfFree(demand) ? null : admission.enqueue(this, demand, onGranted);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the demand if it is free now (and no starving waiter needs its resources), without
     * waiting.
     *
     * @param demand what is needed
     * @return whether it was taken
     */
    public boolean tryAcquire(ResourceDemand demand) {
        check(demand);
        lock.lock();
        try {
            return admission.takeIfFree(demand);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns a demand and starts the waiters that now fit: their continuations run on this
     * thread after the lock is released.
     *
     * @param demand what was taken
     * @throws IllegalStateException naming the resource and the amounts when this would return
     *     more than is taken (a double release); nothing is returned then
     */
    public void release(ResourceDemand demand) {
        check(demand);
        List<Runnable> granted;
        lock.lock();
        try {
            granted = admission.giveBack(demand);
        } finally {
            lock.unlock();
        }
        runAll(granted);
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
            return admission.available(i);
        } finally {
            lock.unlock();
        }
    }

    /** Tasks waiting for resources. */
    public int waiting() {
        lock.lock();
        try {
            return admission.waiting();
        } finally {
            lock.unlock();
        }
    }

    /** Waiters examined by grant passes so far (granted or skipped): the work of releases, for tests. */
    long examinedWaiters() {
        lock.lock();
        try {
            return admission.examined();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Checks invariants 1 to 5 (for tests; walks every queue).
     *
     * @throws IllegalStateException describing the first violation
     */
    void checkInvariants() {
        String broken;
        lock.lock();
        try {
            broken = admission.inconsistency();
        } finally {
            lock.unlock();
        }
        if (broken != null) {
            throw new IllegalStateException(broken);
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

    /** Withdraws a waiter: see {@link Waiting#cancel()}. */
    boolean withdraw(ResourceWaiter w) {
        int state = w.state;
        if (state != ResourceWaiter.WAITING) {
            return state == ResourceWaiter.CANCELLED;
        }
        List<Runnable> granted = null;
        lock.lock();
        try {
            if (w.state != ResourceWaiter.WAITING) {
                return w.state == ResourceWaiter.CANCELLED;
            }
            granted = admission.withdraw(w);
        } finally {
            lock.unlock();
        }
        runAll(granted);
        return true;
    }

    /** Runs granted continuations: all of them; the first exception is rethrown, the others suppressed. */
    private static void runAll(@Nullable List<Runnable> granted) {
        RuntimeException first = null;
        for (int i = 0; granted != null && i < granted.size(); i++) {
            try {
                granted.get(i).run();
            } catch (RuntimeException ex) {
                if (first == null) {
                    first = ex;
                } else {
                    first.addSuppressed(ex);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
