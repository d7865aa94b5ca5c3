package io.hts.engine.run;

import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.MemberLostException;
import io.hts.engine.cluster.Payload;
import io.hts.engine.cluster.RemoteTaskException;
import io.hts.engine.cluster.SliceResult;
import io.hts.engine.cluster.SliceWork;
import io.hts.engine.cluster.SubmittedSlice;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
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
 * or cancels it (an answer that loses has its stored results deleted). A canceller may take a shipment from 0 to {@code DONE}: its shipper then loses the
 * compare-and-set from 0 and ends the attempts it started itself. Attempts are reported through the
 * engine's device-task path ({@link TaskExecution#complete}, {@link TaskExecution#fail}), which
 * ignores a second report.
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
    private static final int DONE = -1;

    private final GraphRun run;
    private final ClusterLink link;
    private final TaskGroup<?> group;
    private final ClusterLink.Needs needs;
    private final String fingerprint;
    private final int sliceSize;
    private final boolean localOnly;
    private final PayloadTransfer transfer;

    private final AtomicReferenceArray<@Nullable Object> members;
    private final AtomicIntegerArray unsettled;
    private final Shipment[] slices;
    /** Each member's latest delivery to another member, by group index (a late cancel of an ended one is ignored). */
    private final AtomicReferenceArray<@Nullable Flight> remote;
    /** The retries sent to other members, each its own shipment. */
    private final Queue<Shipment> retried = new ConcurrentLinkedQueue<>();
    /** Numbers the deliveries of this group's slices and retries, so that no two share a payload key. */
    private final AtomicInteger deliveries = new AtomicInteger();
    /** Slices given to each member in this group (under its own lock; off the hot path: once a slice). */
    private final Map<String, Integer> assigned = new HashMap<>();
    /** The inputs encoded for other members, by task index, each encoded (and stored) once for all slices. */
    private final Map<Integer, CompletableFuture<Payload>> inputs = new ConcurrentHashMap<>();

    GroupSlices(
            GraphRun run,
            ClusterLink link,
            TaskGroup<?> group,
            ClusterLink.Needs needs,
            String fingerprint,
            List<ClusterMember> cluster) {
        this.run = run;
        this.link = link;
        this.group = group;
        this.needs = needs;
        this.fingerprint = fingerprint;
        int n = group.size();
        int size = n == 0 ? 1 : link.sliceSize(group, needs, cluster);
        this.localOnly = size == 0;
        this.sliceSize = localOnly ? Math.max(1, n) : size;
        int slices = (n + sliceSize - 1) / sliceSize;
        this.transfer = new PayloadTransfer(link.settings, link.engine.payloads());
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

    void ready(TaskExecution e) {
        int k = run.graph.task(e.index).groupIndex();
        if (members.compareAndSet(k, null, e)) {
            settled(k / sliceSize);
        }
    }

    void notStarted(int i) {
        int k = run.graph.task(i).groupIndex();
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
        List<TaskExecution> ready = new ArrayList<>(hi - lo);
        for (int k = lo; k < hi; k++) {
            if (members.get(k) instanceof TaskExecution e) {
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
    void retry(TaskExecution e) {
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
    private void ship(@Nullable Shipment shipment, List<TaskExecution> ready, @Nullable ClusterMember target) {
        if (ready.isEmpty()) {
            return;
        }
        if (target == null && needs.gpuOnly()) {
            NoDeviceException none = new NoDeviceException(group + " of graph '" + run.graph.name() + "' has members"
                    + " with only a GPU body, and no member of the cluster has a GPU: " + link.engine.members());
            for (TaskExecution e : ready) {
                run.propagation.failUnstarted(e.index, none, Device.GPU, e.attempt);
            }
            return;
        }
        if (target == null || target.local() || shipment == null) {
            for (TaskExecution e : ready) {
                run.placement.dispatchInSlice(e);
            }
            return;
        }
        List<TaskExecution> started = new ArrayList<>(ready.size());
        for (TaskExecution e : ready) {
            e.device = needs.gpuOnly() ? Device.GPU : Device.CPU; // where it runs there is the member's choice
            if (e.start(TaskExecution.REMOTE_LANE)) {
                started.add(e);
            }
        }
        Flight first = new Flight(shipment, started, 1, new HashSet<>());
        for (TaskExecution e : started) {
            remote.set(run.graph.task(e.index).groupIndex(), first); // (a later delivery holds the same attempts)
        }
        shipment.flight = first; // before the phase: a canceller that wins the phase finds the attempts
        if (!shipment.phase.compareAndSet(0, started.isEmpty() ? DONE : 1)) {
            fail(started, cancelled(null)); // cancelled before it left
        } else if (!started.isEmpty()) {
            deliver(first, target);
        }
    }

    private @Nullable ClusterMember choose(Set<String> excluded) {
        synchronized (assigned) {
            ClusterMember m = link.choose(group, needs, assigned, excluded);
            if (m != null) {
                assigned.merge(m.id(), 1, Integer::sum);
            }
            return m;
        }
    }

    // ================================================================== deliveries

    /** Encodes the flight's inputs (once per input for the group), then submits it to {@code member}. */
    private void deliver(Flight f, ClusterMember member) {
        GraphTopology t = run.topology;
        Map<String, CompletableFuture<Payload>> needed = new LinkedHashMap<>();
        long deadline = Long.MAX_VALUE;
        for (TaskExecution e : f.started) {
            for (int p = t.predecessorStart(e.index); p < t.predecessorEnd(e.index); p++) {
                int up = t.predecessor(p);
                needed.computeIfAbsent(t.name(up), name -> inputs.computeIfAbsent(up, u -> encodeInput(u, name)));
            }
            deadline = Math.min(deadline, e.deadlineNanos());
        }
        Duration limit =
                deadline == Long.MAX_VALUE ? null : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        CompletableFuture.allOf(needed.values().toArray(new CompletableFuture<?>[0]))
                .whenComplete((v, ex) -> {
                    if (ex != null) {
                        end(f, unwrap(ex));
                        return;
                    }
                    Map<String, Payload> encoded = new LinkedHashMap<>();
                    needed.forEach((name, payload) -> encoded.put(name, payload.join()));
                    submit(f, member, limit, encoded);
                });
    }

    private CompletableFuture<Payload> encodeInput(int up, String name) {
        String key = link.engine.localMember().id() + "/" + run.runId() + "/" + run.graph.name() + "/" + name;
        return transfer.send(run.resultOf(up), key);
    }

    private void submit(Flight f, ClusterMember member, @Nullable Duration limit, Map<String, Payload> encoded) {
        int from = Integer.MAX_VALUE;
        int to = 0;
        Set<Integer> sent = new HashSet<>();
        for (TaskExecution e : f.started) {
            int k = run.graph.task(e.index).groupIndex();
            from = Math.min(from, k);
            to = Math.max(to, k + 1);
            sent.add(k);
        }
        Set<Integer> skipped = new HashSet<>(); // cancelled between started ones: not to run there
        for (int k = from; k < to; k++) {
            if (!sent.contains(k)) {
                skipped.add(k);
            }
        }
        SliceWork work = new SliceWork(
                run.graph.name(),
                fingerprint,
                group.name(),
                from,
                to,
                link.engine.localMember().id(),
                run.runId(),
                f.number,
                limit,
                encoded,
                skipped);
        SubmittedSlice submitted;
        try {
            submitted = link.engine.submit(member, work);
        } catch (RuntimeException ex) {
            outcome(f, member, work, null, ex);
            return;
        }
        f.submitted = submitted;
        if (f.shipment.phase.get() != f.delivery) {
            submitted.cancel(); // cancelled (or answered) while it was being sent
        }
        submitted.result().whenComplete((result, ex) -> outcome(f, member, work, result, ex));
    }

    /** A delivery's answer; only the winner of its phase acts on it. */
    private void outcome(
            Flight f, ClusterMember member, SliceWork work, @Nullable SliceResult result, @Nullable Throwable error) {
        Throwable ex = error == null ? null : unwrap(error);
        if (ex instanceof MemberLostException lost) {
            int next = f.delivery + 1;
            if (!f.shipment.phase.compareAndSet(f.delivery, next)) {
                return; // cancelled meanwhile
            }
            f.lost.add(member.id());
            ClusterMember other = next <= link.settings.sliceAttempts() ? choose(f.lost) : null;
            if (other == null) { // (this member may be the other: the slice then goes through its own service)
                if (!f.shipment.phase.compareAndSet(next, DONE)) {
                    return; // cancelled meanwhile: its canceller failed the attempts
                }
                fail(
                        f.started,
                        new MemberLostException(
                                work + " was lost with " + f.lost.size() + " member(s) "
                                        + f.lost + " and has no member left to run it (sliceAttempts "
                                        + link.settings.sliceAttempts()
                                        + ")",
                                lost));
                return;
            }
            Flight again = new Flight(f.shipment, f.started, next, f.lost);
            f.shipment.flight = again;
            if (f.shipment.phase.get() == next) {
                deliver(again, other);
            } // else cancelled meanwhile: its canceller failed the attempts (the same as the previous delivery's)
            return;
        }
        if (!f.shipment.phase.compareAndSet(f.delivery, DONE)) {
            if (result != null) {
                transfer.delete(result.results()); // nobody reads it: its stored results go
            }
            return; // an answer to a delivery already superseded, answered or cancelled
        }
        if (ex != null || result == null) {
            fail(
                    f.started,
                    ex != null ? ex : new IllegalStateException(member + " answered " + work + " with nothing"));
            return;
        }
        transfer.receive(result.results(), true).whenComplete((decoded, decodeError) -> {
            if (decodeError != null || !(decoded instanceof List<?> values) || values.size() != work.size()) {
                fail(
                        f.started,
                        decodeError != null
                                ? unwrap(decodeError)
                                : new IllegalStateException(member + " answered " + work + " with " + decoded
                                        + " instead of " + work.size() + " results"));
                return;
            }
            if (result.failures().isEmpty() && result.gpuMembers() == 0) {
                // (a slice that ran on a GPU there taught that member's cost model, not this one's)
                link.scheduler
                        .costModel()
                        .record(group.get(0).statisticsName(), Device.CPU, result.bodyNanos() / work.size());
            }
            for (TaskExecution e : f.started) {
                int k = run.graph.task(e.index).groupIndex();
                SliceResult.RemoteFailure failure = result.failures().get(k);
                if (failure != null) {
                    e.fail(new RemoteTaskException(member.toString(), failure));
                } else {
                    e.complete(values.get(k - work.from()));
                }
            }
        });
    }

    /** The flight's delivery cannot go on: every attempt in it fails (a second report is ignored). */
    private void end(Flight f, Throwable error) {
        if (f.shipment.phase.compareAndSet(f.delivery, DONE)) {
            fail(f.started, error);
        }
    }

    private static void fail(List<TaskExecution> started, Throwable error) {
        for (TaskExecution e : started) {
            e.fail(error);
        }
    }

    // ================================================================== run-level

    /**
     * The run was cancelled, or failed fast: every slice and retry in flight is cancelled on its
     * member and its attempts end CANCELLED; those not yet sent stay here.
     */
    void cancelAll(Throwable cause) {
        for (Shipment s : slices) {
            cancel(s, cause);
        }
        for (Shipment s : retried) {
            cancel(s, cause);
        }
    }

    /**
     * {@code run.cancel(task)} of a member (or of its group): when its attempt runs on another
     * member, it ends CANCELLED now, without waiting for its delivery; once every member the delivery
     * started was asked to stop, the delivery is cancelled on its member, as the run's cancel does
     * (else its other members go on there, and this member's result from it is ignored).
     */
    void cancelRemote(int i, Throwable cause) {
        Flight f = remote.get(run.graph.task(i).groupIndex());
        if (f == null) {
            return;
        }
        boolean all = true;
        for (TaskExecution e : f.started) {
            if (e.index == i) {
                e.fail(cause); // a second report (the delivery's answer, or an attempt that ended) is ignored
            } else {
                all &= run.propagation.taskCancelRequest(e.index) != null;
            }
        }
        if (all) {
            cancel(f.shipment, cause);
        }
    }

    private void cancel(Shipment s, Throwable cause) {
        int p = s.phase.get();
        while (p != DONE && !s.phase.compareAndSet(p, DONE)) {
            p = s.phase.get();
        }
        Flight f = s.flight; // set before the phase left 0: this or the previous delivery, same attempts
        if (p == DONE || f == null) {
            return; // done already, or not shipped: its shipper loses the phase and ends its attempts
        }
        SubmittedSlice submitted = f.submitted;
        if (submitted != null) {
            submitted.cancel();
        }
        fail(f.started, cancelled(cause));
    }

    private TaskCancelledException cancelled(@Nullable Throwable cause) {
        Throwable why = cause != null ? cause : run.state.stopCause();
        return new TaskCancelledException(
                "slice of " + group + " cancelled on its member: "
                        + (why == null ? "the run stopped" : why.getMessage()),
                why);
    }

    /** Deletes the inputs this group stored for other members (their time to live would, later). */
    void deleteStoredInputs() {
        for (CompletableFuture<Payload> p : inputs.values()) {
            p.thenAccept(transfer::delete);
        }
    }

    private static Throwable unwrap(Throwable ex) {
        Throwable t = ex;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** A slice, or a retry sent away: the phase of its deliveries and its latest flight. */
    private static final class Shipment {

        final AtomicInteger phase = new AtomicInteger();
        volatile @Nullable Flight flight;
    }

    /** One delivery of a shipment: its started attempts, its phase, its number on the wire, the members lost so far. */
    private final class Flight {

        final Shipment shipment;
        final List<TaskExecution> started;
        final int delivery;
        final int number = deliveries.incrementAndGet();
        final Set<String> lost;
        volatile @Nullable SubmittedSlice submitted;

        Flight(Shipment shipment, List<TaskExecution> started, int delivery, Set<String> lost) {
            this.shipment = shipment;
            this.started = started;
            this.delivery = delivery;
            this.lost = lost;
        }
    }
}
