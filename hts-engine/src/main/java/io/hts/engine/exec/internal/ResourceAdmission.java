package io.hts.engine.exec.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The sequential core of a {@link ResourceLimiter}: the free amounts, the waiters' queues and the
 * grant pass over them. Not thread-safe: the limiter calls every method under its lock, and runs
 * the continuations this returns after unlocking. The invariants and the complexity are stated in
 * the limiter's class comment.
 *
 * <h2>The grant pass</h2>
 *
 * A release puts one cursor at the head of the queue of each resource it returns; the pass merges
 * the cursors by arrival order (the smallest sequence number first), so the first fit is taken in
 * arrival order across all queues. The examined waiter is granted when it fits and is not blocked,
 * otherwise skipped (counted once per pass, since all cursors on it move past it together). A
 * cursor stops at the end of its queue, when its resource is exhausted (every waiter in that queue
 * asks a positive amount of it), and at a starving waiter that is not granted (everything behind
 * it on that resource is blocked). Amounts only fall during a pass, and only an earlier starving
 * waiter can unblock a waiter, so a waiter skipped once stays ungrantable for the rest of the
 * pass: one forward sweep restores "no waiting waiter fits and is unblocked". Granting or
 * withdrawing a starving waiter resumes each queue it blocked just behind it, unless an earlier
 * starving waiter still blocks that queue.
 */
final class ResourceAdmission {

    private final String[] names;
    private final long[] capacity;
    private final long[] available;
    private final int maxOvertakes;
    private final WaiterQueue[] queues;
    /** The grant pass's position in each queue; all null outside a pass. */
    private final WaiterQueue.@Nullable Node[] cursors;

    private long arrivals;
    private int waiting;
    private long examined;

    ResourceAdmission(String[] names, long[] capacity, int maxOvertakes) {
        this.names = names;
        this.capacity = capacity;
        this.available = capacity.clone();
        this.maxOvertakes = maxOvertakes;
        this.queues = new WaiterQueue[names.length];
        this.cursors = new WaiterQueue.Node[names.length];
        for (int r = 0; r < names.length; r++) {
            queues[r] = new WaiterQueue();
        }
    }

    long available(int r) {
        return available[r];
    }

    int waiting() {
        return waiting;
    }

    /** Waiters examined by grant passes so far (granted or skipped): the work of releases. */
    long examined() {
        return examined;
    }

    /** Takes the demand when every amount is free and no starving waiter needs its resources. O(k). */
    boolean takeIfFree(ResourceDemand d) {
        int[] idx = d.indices;
        long[] amt = d.amounts;
        for (int i = 0; i < idx.length; i++) {
            if (amt[i] > 0 && (available[idx[i]] < amt[i] || queues[idx[i]].hasStarving())) {
                return false;
            }
        }
        for (int i = 0; i < idx.length; i++) {
            available[idx[i]] -= amt[i];
        }
        return true;
    }

    /** Queues a demand that {@link #takeIfFree} refused. O(k). */
    ResourceWaiter enqueue(ResourceLimiter limiter, ResourceDemand d, Runnable onGranted) {
        ResourceWaiter w = new ResourceWaiter(limiter, arrivals++, d, onGranted);
        for (int j = 0; j < w.res.length; j++) {
            queues[w.res[j]].append(w.nodes[j]);
        }
        waiting++;
        return w;
    }

    /**
     * Returns a demand's amounts and grants the waiters that now fit.
     *
     * @return the granted continuations, or null
     * @throws IllegalStateException naming the resource and the amounts when this would return
     *     more than is taken; nothing is returned then
     */
    @Nullable
    List<Runnable> giveBack(ResourceDemand d) {
        int[] idx = d.indices;
        long[] amt = d.amounts;
        for (int i = 0; i < idx.length; i++) {
            int r = idx[i];
            long taken = capacity[r] - available[r];
            if (amt[i] > taken) {
                throw new IllegalStateException("releasing " + d + " returns " + amt[i] + " of resource '" + names[r]
                        + "' but only " + taken + " of it is taken (capacity " + capacity[r] + ", free " + available[r]
                        + "): released more than was acquired, a double release?");
            }
        }
        boolean pass = false;
        for (int i = 0; i < idx.length; i++) {
            int r = idx[i];
            available[r] += amt[i];
            if (amt[i] > 0) {
                pass |= resume(r, queues[r].head());
            }
        }
        return pass ? grantPass() : null;
    }

    /**
     * Withdraws a waiting waiter (its state must be WAITING; it becomes CANCELLED).
     *
     * @return the continuations of the waiters its withdrawal unblocked and granted, or null
     */
    @Nullable
    List<Runnable> withdraw(ResourceWaiter w) {
        w.state = ResourceWaiter.CANCELLED;
        return unlink(w, false) ? grantPass() : null;
    }

    /** Puts resource r's cursor at {@code from}, unless there is nothing there or nothing left of r. */
    private boolean resume(int r, WaiterQueue.@Nullable Node from) {
        cursors[r] = from != null && available[r] > 0 ? from : null;
        return cursors[r] != null;
    }

    /** The grant pass (see the class comment); returns the granted continuations, or null. */
    private @Nullable List<Runnable> grantPass() {
        List<Runnable> granted = null;
        while (true) {
            int best = -1;
            long bestSeq = Long.MAX_VALUE;
            for (int r = 0; r < cursors.length; r++) {
                WaiterQueue.Node c = cursors[r];
                if (c != null && c.waiter.seq < bestSeq) {
                    best = r;
                    bestSeq = c.waiter.seq;
                }
            }
            if (best < 0) {
                return granted;
            }
            ResourceWaiter w = Objects.requireNonNull(cursors[best]).waiter;
            examined++;
            if (w.fits(available) && !w.blocked(queues)) {
                if (granted == null) {
                    granted = new ArrayList<>(2);
                }
                granted.add(grant(w));
                continue;
            }
            if (!w.starving && ++w.overtaken >= maxOvertakes) {
                w.markStarving(queues, true);
            }
            for (int j = 0; j < w.res.length; j++) {
                int s = w.res[j];
                if (cursors[s] == w.nodes[j]) {
                    resume(s, w.starving ? null : w.nodes[j].next);
                }
            }
        }
    }

    /** Takes a fitting waiter's demand, unlinks it and moves the cursors past it. */
    private Runnable grant(ResourceWaiter w) {
        for (int j = 0; j < w.res.length; j++) {
            available[w.res[j]] -= w.amt[j];
        }
        w.state = ResourceWaiter.GRANTED;
        Runnable onGranted = Objects.requireNonNull(w.onGranted);
        unlink(w, true);
        return onGranted;
    }

    /**
     * Unlinks a waiter that leaves (granted or withdrawn): cursors on it move past it, and a
     * starving waiter's queues are resumed just behind it unless an earlier starving waiter still
     * blocks them. Returns whether a withdrawal left a cursor to run a pass with.
     */
    private boolean unlink(ResourceWaiter w, boolean inPass) {
        boolean wasStarving = w.starving;
        if (wasStarving) {
            w.markStarving(queues, false);
        }
        boolean any = false;
        for (int j = 0; j < w.res.length; j++) {
            int s = w.res[j];
            WaiterQueue.Node n = w.nodes[j];
            WaiterQueue.Node next = n.next;
            boolean at = cursors[s] == n;
            queues[s].unlink(n);
            if (at || (wasStarving && cursors[s] == null && !queues[s].starvesBefore(w.seq))) {
                any |= resume(s, next);
            }
        }
        w.onGranted = null;
        waiting--;
        return any && !inPass;
    }

    /**
     * Checks the invariants (for tests; walks every queue): amounts within capacity, no cursor
     * left, each queue well formed, every queued waiter waiting, marked starving exactly when
     * skipped enough, and not grantable; the waiting count matches.
     *
     * @return a description of the first violation, or null
     */
    @Nullable
    String inconsistency() {
        int queued = 0;
        for (int r = 0; r < names.length; r++) {
            String broken = available[r] < 0 || available[r] > capacity[r] || cursors[r] != null
                    ? "resource '" + names[r] + "': free " + available[r] + " of " + capacity[r]
                    : queues[r].inconsistency(
                            r,
                            w -> w.state != ResourceWaiter.WAITING
                                    || w.starving != (w.overtaken >= maxOvertakes)
                                    || (!w.blocked(queues) && w.fits(available)));
            if (broken != null) {
                return broken;
            }
            queued += queues[r].firstQueueOf(r);
        }
        return queued == waiting ? null : waiting + " waiters counted, " + queued + " queued";
    }
}
