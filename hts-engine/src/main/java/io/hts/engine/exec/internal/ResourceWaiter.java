package io.hts.engine.exec.internal;

import org.jspecify.annotations.Nullable;

/**
 * One queued demand of a {@link ResourceLimiter}: the handle {@link ResourceLimiter#acquireOrWait}
 * returns, its place in the queues of the resources it needs, and the one-way state that decides
 * the race between its grant and its withdrawal.
 *
 * <p>The state goes from {@link #WAITING} to {@link #GRANTED} or to {@link #CANCELLED} once,
 * written only under the limiter's lock (so exactly one of grant and withdrawal wins); it is
 * volatile so that {@link #cancel()} answers without the lock once it is decided. Every other
 * field that changes is guarded by the limiter's lock, and so are the methods below, which read
 * the limiter's amounts and queues.
 */
final class ResourceWaiter implements ResourceLimiter.Waiting {

    static final int WAITING = 0;
    static final int GRANTED = 1;
    static final int CANCELLED = 2;

    final ResourceLimiter limiter;
    /** Arrival order, unique per limiter. */
    final long seq;

    final ResourceDemand demand;
    /** The resources (indices) and amounts of the demand's positive entries, and their nodes. */
    final int[] res;

    final long[] amt;
    final WaiterQueue.Node[] nodes;
    /** Cleared when it leaves, so that a kept handle does not keep the task alive. */
    @Nullable
    Runnable onGranted;
    /** How many grant passes skipped it; it starves at the limiter's maximum. */
    int overtaken;

    boolean starving;
    volatile int state = WAITING;

    ResourceWaiter(ResourceLimiter limiter, long seq, ResourceDemand demand, Runnable onGranted) {
        this.limiter = limiter;
        this.seq = seq;
        this.demand = demand;
        this.onGranted = onGranted;
        int k = 0;
        for (long a : demand.amounts) {
            k += a > 0 ? 1 : 0;
        }
        res = new int[k];
        amt = new long[k];
        nodes = new WaiterQueue.Node[k];
        for (int i = 0, j = 0; i < demand.indices.length; i++) {
            if (demand.amounts[i] > 0) {
                res[j] = demand.indices[i];
                amt[j] = demand.amounts[i];
                nodes[j++] = new WaiterQueue.Node(this);
            }
        }
    }

    @Override
    public boolean cancel() {
        return limiter.withdraw(this);
    }

    /** Whether every amount it asks for is free. */
    boolean fits(long[] available) {
        for (int j = 0; j < res.length; j++) {
            if (available[res[j]] < amt[j]) {
                return false;
            }
        }
        return true;
    }

    /** Whether a starving waiter that arrived before it needs one of its resources. */
    boolean blocked(WaiterQueue[] queues) {
        for (int r : res) {
            if (queues[r].starvesBefore(seq)) {
                return true;
            }
        }
        return false;
    }

    /** Marks it starving (or no longer) here and in the starving sets of its queues. */
    void markStarving(WaiterQueue[] queues, boolean starves) {
        starving = starves;
        for (int r : res) {
            if (starves) {
                queues[r].addStarving(this);
            } else {
                queues[r].removeStarving(this);
            }
        }
    }

    /** This waiter's node in the queue of resource r, or null. */
    WaiterQueue.@Nullable Node nodeOf(int r) {
        for (int j = 0; j < res.length; j++) {
            if (res[j] == r) {
                return nodes[j];
            }
        }
        return null;
    }

    /** Whether it was granted. */
    boolean granted() {
        return state == GRANTED;
    }

    /** Whether it was withdrawn. */
    boolean cancelled() {
        return state == CANCELLED;
    }

    @Override
    public String toString() {
        return "waiter " + seq + " for " + demand + " ("
                + (state == WAITING ? "waiting" : state == GRANTED ? "granted" : "withdrawn")
                + (starving ? ", starving" : "") + ", skipped " + overtaken + ")";
    }
}
