package io.hts.engine.exec.internal;

import java.util.Comparator;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The waiters of one resource of a {@link ResourceLimiter}, in arrival order, and which of them
 * starve.
 *
 * <p>An intrusive doubly linked list of {@link Node}s: a waiter that needs several resources has
 * one node in each of their queues, so withdrawing or granting it unlinks it everywhere in
 * O(resources of its demand), without searching. Beside the list, the starving waiters of this
 * resource are kept ordered by arrival ({@link ResourceWaiter#seq}), because "is there a
 * starving waiter that arrived before this one?" must be answered without walking the queue; the
 * earliest one's sequence number is cached so that the question costs O(1), and keeping the set
 * costs O(log s) for s starving waiters of this resource, once when a waiter starts starving and
 * once when it leaves.
 *
 * <p>Not thread-safe: guarded by the owning limiter's lock.
 */
final class WaiterQueue {

    /** Orders waiters by arrival (a named class, not a lambda: model checkers walk its fields). */
    private static final class ByArrival implements Comparator<ResourceWaiter> {
        @Override
        public int compare(ResourceWaiter a, ResourceWaiter b) {
            return Long.compare(a.seq, b.seq);
        }
    }

    private static final Comparator<ResourceWaiter> BY_ARRIVAL = new ByArrival();

    /** One waiter's place in one resource's queue. */
    static final class Node {
        final ResourceWaiter waiter;

        @Nullable
        Node prev;

        @Nullable
        Node next;

        Node(ResourceWaiter waiter) {
            this.waiter = waiter;
        }
    }

    private @Nullable Node head;
    private @Nullable Node tail;
    private int size;
    private @Nullable TreeSet<ResourceWaiter> starving;
    private long firstStarvingSeq = Long.MAX_VALUE;

    /** The oldest waiter's node, or null when none waits for this resource. */
    @Nullable
    Node head() {
        return head;
    }

    int size() {
        return size;
    }

    /** Appends a node (its waiter is the newest of all). O(1). */
    void append(Node n) {
        n.prev = tail;
        n.next = null;
        if (tail == null) {
            head = n;
        } else {
            tail.next = n;
        }
        tail = n;
        size++;
    }

    /** Unlinks a node that is in this queue; its links are cleared. O(1). */
    void unlink(Node n) {
        Node p = n.prev;
        Node s = n.next;
        if (p == null) {
            head = s;
        } else {
            p.next = s;
        }
        if (s == null) {
            tail = p;
        } else {
            s.prev = p;
        }
        n.prev = null;
        n.next = null;
        size--;
    }

    /** Whether a starving waiter needs this resource (it then blocks every later arrival). O(1). */
    boolean hasStarving() {
        return firstStarvingSeq != Long.MAX_VALUE;
    }

    /** Whether a starving waiter that arrived before {@code seq} needs this resource. O(1). */
    boolean starvesBefore(long seq) {
        return firstStarvingSeq < seq;
    }

    /** Records that a waiter of this queue started starving. O(log s). */
    void addStarving(ResourceWaiter w) {
        if (starving == null) {
            starving = new TreeSet<>(BY_ARRIVAL);
        }
        starving.add(w);
        firstStarvingSeq = Math.min(firstStarvingSeq, w.seq);
    }

    /** Records that a starving waiter left (granted or withdrawn). O(log s). */
    void removeStarving(ResourceWaiter w) {
        TreeSet<ResourceWaiter> set = starving;
        if (set == null || !set.remove(w)) {
            throw new IllegalStateException("waiter " + w.seq + " is not recorded as starving");
        }
        firstStarvingSeq = set.isEmpty() ? Long.MAX_VALUE : set.first().seq;
    }

    /**
     * Checks this queue's structure (for tests): links agree both ways, arrival order, the size,
     * the starving set is exactly the starving waiters of the list, and no waiter is {@code wrong}.
     *
     * @param resource this queue's resource index, as the waiters' nodes record it
     * @param wrong what no queued waiter may be (granted, withdrawn, grantable...)
     * @return a description of the first inconsistency, or null
     */
    @Nullable
    String inconsistency(int resource, Predicate<ResourceWaiter> wrong) {
        int n = 0;
        int starvingSeen = 0;
        long first = Long.MAX_VALUE;
        long lastSeq = Long.MIN_VALUE;
        Node prev = null;
        for (Node x = head; x != null; prev = x, x = x.next) {
            ResourceWaiter w = x.waiter;
            if (x.prev != prev || w.seq <= lastSeq || w.nodeOf(resource) != x || wrong.test(w)) {
                return "queue of resource " + resource + " is corrupt at " + w;
            }
            if (w.starving) {
                starvingSeen++;
                first = Math.min(first, w.seq);
                if (starving == null || !starving.contains(w)) {
                    return "starving " + w + " is missing from the starving set of " + resource;
                }
            }
            lastSeq = w.seq;
            n++;
        }
        int recorded = starving == null ? 0 : starving.size();
        if (tail != prev || n != size || starvingSeen != recorded || first != firstStarvingSeq) {
            return "queue of resource " + resource + ": size " + size + " for " + n + " nodes, " + recorded
                    + " recorded starving for " + starvingSeen + ", first starving " + firstStarvingSeq + " for "
                    + first;
        }
        return null;
    }

    /** How many waiters of this queue have it as their first queue (counting each waiter once, for tests). */
    int firstQueueOf(int resource) {
        int n = 0;
        for (Node x = head; x != null; x = x.next) {
            n += x.waiter.res[0] == resource ? 1 : 0;
        }
        return n;
    }
}
