package io.hts.engine.cluster.internal;

import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.internal.SliceDeliveries.Flight;
import io.hts.engine.cluster.internal.SliceDeliveries.Shipment;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.NoDeviceException;
import io.hts.engine.run.internal.AttemptHandle;
import io.hts.engine.run.internal.RunHandle;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * One distributed group of one run, cut into slices of {@code sliceSize} members: a slice goes out
 * once each of its members is READY or was cancelled before it started; it runs on this member
 * (its attempts placed as any attempt) or on another, where its attempts count as RUNNING until the
 * member answers, as a device's tasks do until their backend reports. A member's retry (its task's
 * Resilience4j retry, after a remote or local failure) goes out alone the same way, to the member
 * the group's choice gives then.
 *
 * <p><b>Invariants.</b> A member's slot in {@code members} is set once, by a compare-and-set from
 * null: to its attempt by the thread that routed it READY, or to {@code NOT_STARTED} by the thread
 * that cancelled it first; only the winner decrements its slice's {@code unsettled} count, so the
 * count reaches 0 exactly once, and the thread that brings it there ships the slice. Each slice, and
 * each retry sent away, is a {@link Shipment} whose {@code phase} is 0 until it leaves, then the
 * number of its delivery in flight (1, 2... as members are lost under it), then {@code DONE}. Every
 * change of phase is one compare-and-set, and only its winner acts: ships it, accepts the outcome
 * (so every member's result counts once, whatever late or repeated answers arrive), sends it again,
 * or cancels it (an answer that loses has its stored results deleted); {@link SliceDeliveries}
 * does the delivering. A canceller may take a shipment from 0 to {@code DONE}: its shipper then
 * loses the compare-and-set from 0 and ends the attempts it started itself. Attempts are started
 * and reported through the kernel's hooks ({@link AttemptHandle#startRemote},
 * {@link AttemptHandle#complete}, {@link AttemptHandle#fail}), which arbitrate as for a device's
 * attempts: one that was cancelled does not start, and a second report is ignored.
 *
 * <p><b>Memory ordering.</b> An attempt stored in its slot happens-before the decrement that
 * settles the slot (both atomic), so the shipper sees every slot of its slice. A delivery's
 * {@code Flight} is published in its shipment ({@code volatile}) before the compare-and-set of the
 * phase that sends it; a canceller that wins the phase reads the attempts from there (this flight or
 * the one before it, which holds the same attempts), or finds none and leaves them to the shipper;
 * when the flight's {@code submitted} slice is not yet set, the sender sees the phase changed after
 * setting it and cancels the delivery itself. A retry's shipment is added to {@code retried} before
 * its attempt starts, so a run-level cancel that follows the start sees it.
 */
final class GroupSlices {

    private static final Object NOT_STARTED = new Object();
    private static final int DONE = SliceDeliveries.DONE;

    private final RunHandle run;
    private final ClusterLink link;
    private final TaskGroup<?> group;
    private final ClusterLink.Needs needs;
    private final int sliceSize;
    private final boolean localOnly;
    private final SliceDeliveries deliveries;

    private final AtomicReferenceArray<@Nullable Object> members;
    private final AtomicIntegerArray unsettled;
    private final Shipment[] slices;
    /** Each member's latest delivery to another member, by group index (a late cancel of an ended one is ignored). */
    private final AtomicReferenceArray<@Nullable Flight> remote;
    /** The retries sent to other members, each its own shipment. */
    private final Queue<Shipment> retried = new ConcurrentLinkedQueue<>();
    /** Slices given to each member in this group (under its own lock; off the hot path: once a slice). */
    private final Map<String, Integer> assigned = new HashMap<>();

    GroupSlices(
            RunHandle run,
            ClusterLink link,
            TaskGroup<?> group,
            ClusterLink.Needs needs,
            String fingerprint,
            List<ClusterMember> cluster) {
        this.run = run;
        this.link = link;
        this.group = group;
        this.needs = needs;
        int n = group.size();
        int size = n == 0 ? 1 : link.sliceSize(group, needs, cluster);
        this.localOnly = size == 0;
        this.sliceSize = localOnly ? Math.max(1, n) : size;
        int slices = (n + sliceSize - 1) / sliceSize;
        this.deliveries = new SliceDeliveries(run, link, this, group, fingerprint);
        this.members = new AtomicReferenceArray<>(n);
        this.unsettled = new AtomicIntegerArray(slices);
        for (int s = 0; s < slices; s++) {
            unsettled.set(s, Math.min(n, (s + 1) * sliceSize) - s * sliceSize);
        }
        this.remote = new AtomicReferenceArray<>(n);
        this.slices = new Shipment[slices];
        for (int s = 0; s < slices; s++) {
            this.slices[s] = new Shipment();
        }
    }

    // ================================================================== slices fill up

    void ready(AttemptHandle e) {
        int k = run.graph().task(e.task()).groupIndex();
        if (members.compareAndSet(k, null, e)) {
            settled(k / sliceSize);
        }
    }

    void notStarted(int i) {
        int k = run.graph().task(i).groupIndex();
        if (members.compareAndSet(k, null, NOT_STARTED)) {
            settled(k / sliceSize);
        }
    }

    private void settled(int slice) {
        if (unsettled.decrementAndGet(slice) == 0) {
            send(slice);
        }
    }

    /**
     * The slice is settled: placed here as any attempt (device, resources), or started and sent to
     * another member.
     */
    private void send(int slice) {
        int lo = slice * sliceSize;
        int hi = Math.min(group.size(), lo + sliceSize);
        List<AttemptHandle> ready = new ArrayList<>(hi - lo);
        for (int k = lo; k < hi; k++) {
            if (members.get(k) instanceof AttemptHandle e) {
                ready.add(e);
            }
        }
        ClusterMember target = localOnly && !needs.gpuOnly() ? null : choose(Set.of());
        Shipment shipment = slices[slice];
        if (target == null || target.local() || ready.isEmpty()) {
            shipment.phase.compareAndSet(0, DONE); // (or a canceller took it: the attempts then do not start here)
        }
        ship(shipment, ready, target);
    }

    /**
     * A member's retry: sent alone to the member the group's choice gives now (this one included),
     * as its first attempt was with its slice.
     */
    void retry(AttemptHandle e) {
        ClusterMember target = choose(Set.of());
        if (target == null || target.local()) {
            ship(null, List.of(e), target);
            return;
        }
        Shipment shipment = new Shipment();
        retried.add(shipment); // before the attempt starts: a cancel after its start finds it
        ship(shipment, List.of(e), target);
    }

    /**
     * Sends attempts to {@code target}: placed here when it is this member (or none, and the group
     * needs no GPU), failed naming the group when no member can run them, else started and delivered.
     */
    private void ship(@Nullable Shipment shipment, List<AttemptHandle> ready, @Nullable ClusterMember target) {
        if (ready.isEmpty()) {
            return;
        }
        if (target == null && needs.gpuOnly()) {
            NoDeviceException none = new NoDeviceException(group + " of graph '"
                    + run.graph().name() + "' has members"
                    + " with only a GPU body, and no member of the cluster has a GPU"
                    + (needs.gpus() > 1 ? " cuda:" + (needs.gpus() - 1) + " (members are pinned to it)" : "") + ": "
                    + link.engine.members());
            for (AttemptHandle e : ready) {
                e.failUnstarted(none, Device.GPU);
            }
            return;
        }
        if (target == null || target.local() || shipment == null) {
            for (AttemptHandle e : ready) {
                e.runHere();
            }
            return;
        }
        List<AttemptHandle> started = new ArrayList<>(ready.size());
        for (AttemptHandle e : ready) {
            // where it runs there is the member's choice; its retry and time limit are those of a body it has
            // (a CPU-only member of a group with GPU-only ones keeps its CPU retry and time limit)
            Device device = run.graph().task(e.task()).cpuBody() == null ? Device.GPU : Device.CPU;
            if (e.startRemote(device)) {
                started.add(e);
            }
        }
        Flight first = deliveries.first(shipment, started);
        for (AttemptHandle e : started) {
            remote.set(run.graph().task(e.task()).groupIndex(), first); // (a later delivery holds the same attempts)
        }
        shipment.flight = first; // before the phase: a canceller that wins the phase finds the attempts
        if (!shipment.phase.compareAndSet(0, started.isEmpty() ? DONE : 1)) {
            SliceDeliveries.fail(started, deliveries.cancelled(null)); // cancelled before it left
        } else if (!started.isEmpty()) {
            deliveries.deliver(first, target);
        }
    }

    /** The member for the next slice or retry of the group, never one {@code excluded}; counted as given it. */
    @Nullable
    ClusterMember choose(Set<String> excluded) {
        synchronized (assigned) {
            ClusterMember m = link.choose(group, needs, assigned, excluded);
            if (m != null) {
                assigned.merge(m.id(), 1, Integer::sum);
            }
            return m;
        }
    }

    // ================================================================== run-level

    /**
     * The run was cancelled, or failed fast: every slice and retry in flight is cancelled on its
     * member and its attempts end CANCELLED; those not yet sent stay here.
     */
    void cancelAll(Throwable cause) {
        for (Shipment s : slices) {
            deliveries.cancel(s, cause);
        }
        for (Shipment s : retried) {
            deliveries.cancel(s, cause);
        }
    }

    /**
     * {@code run.cancel(task)} of a member (or of its group): when its attempt runs on another
     * member, it ends CANCELLED now, without waiting for its delivery; once every member the delivery
     * started was asked to stop, the delivery is cancelled on its member, as the run's cancel does
     * (else its other members go on there, and this member's result from it is ignored).
     */
    void cancelRemote(int i, Throwable cause) {
        Flight f = remote.get(run.graph().task(i).groupIndex());
        if (f == null) {
            return;
        }
        boolean all = true;
        for (AttemptHandle e : f.started) {
            if (e.task() == i) {
                e.fail(cause); // a second report (the delivery's answer, or an attempt that ended) is ignored
            } else {
                all &= run.cancelRequested(e.task());
            }
        }
        if (all) {
            deliveries.cancel(f.shipment, cause);
        }
    }

    /** Deletes the inputs this group stored for other members (their time to live would, later). */
    void deleteStoredInputs() {
        deliveries.deleteStoredInputs();
    }
}
