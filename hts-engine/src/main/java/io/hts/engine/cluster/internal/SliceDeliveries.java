package io.hts.engine.cluster.internal;

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
import io.hts.engine.run.internal.AttemptHandle;
import io.hts.engine.run.internal.RunHandle;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The deliveries of one distributed group's slices and retries to other members (for its
 * {@link GroupSlices}): encodes the inputs (each once for the group), submits the slice, and acts on
 * the answer: the members' results and failures, a lost member (the slice goes to another, up to
 * {@code sliceAttempts}), or a cancel. The phases and their invariants are {@link GroupSlices}'s: a
 * {@link Shipment}'s phase changes only by compare-and-set, and only the winner acts.
 *
 * <p><b>Memory ordering.</b> A flight is published in its shipment ({@code volatile}) before the
 * compare-and-set of the phase that sends it; a canceller that wins the phase reads the attempts from
 * there (this flight or the one before it, which holds the same attempts), or finds none and leaves
 * them to the shipper; when a flight's {@code submitted} slice is not yet set, the submitter sees
 * the phase changed after setting it and cancels the delivery itself.
 */
final class SliceDeliveries {

    static final int DONE = -1;

    private final RunHandle run;
    private final ClusterLink link;
    private final GroupSlices slices;
    private final TaskGroup<?> group;
    private final String fingerprint;
    private final PayloadTransfer transfer;
    /** Numbers the deliveries of this group's slices and retries, so that no two share a payload key. */
    private final AtomicInteger deliveries = new AtomicInteger();
    /** The inputs encoded for other members, by task index, each encoded (and stored) once for all slices. */
    private final Map<Integer, CompletableFuture<Payload>> inputs = new ConcurrentHashMap<>();

    SliceDeliveries(RunHandle run, ClusterLink link, GroupSlices slices, TaskGroup<?> group, String fingerprint) {
        this.run = run;
        this.link = link;
        this.slices = slices;
        this.group = group;
        this.fingerprint = fingerprint;
        this.transfer = new PayloadTransfer(link.settings, link.engine.payloads());
    }

    /** A shipment's first delivery of the attempts started for it. */
    Flight first(Shipment shipment, List<AttemptHandle> started) {
        return new Flight(shipment, started, 1, new HashSet<>(), deliveries.incrementAndGet());
    }

    /** Encodes the flight's inputs (once per input for the group), then submits it to {@code member}. */
    void deliver(Flight f, ClusterMember member) {
        GraphTopology t = run.graph().topology();
        Map<String, CompletableFuture<Payload>> needed = new LinkedHashMap<>();
        long deadline = Long.MAX_VALUE;
        for (AttemptHandle e : f.started) {
            for (int p = t.predecessorStart(e.task()); p < t.predecessorEnd(e.task()); p++) {
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
        String key = link.engine.localMember().id() + "/" + run.runId() + "/"
                + run.graph().name() + "/" + name;
        return transfer.send(run.resultOf(up), key);
    }

    private void submit(Flight f, ClusterMember member, @Nullable Duration limit, Map<String, Payload> encoded) {
        int from = Integer.MAX_VALUE;
        int to = 0;
        Set<Integer> sent = new HashSet<>();
        for (AttemptHandle e : f.started) {
            int k = run.graph().task(e.task()).groupIndex();
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
                run.graph().name(),
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
            ClusterMember other = next <= link.settings.sliceAttempts() ? slices.choose(f.lost) : null;
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
            Flight again = new Flight(f.shipment, f.started, next, f.lost, deliveries.incrementAndGet());
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
            for (AttemptHandle e : f.started) {
                int k = run.graph().task(e.task()).groupIndex();
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

    static void fail(List<AttemptHandle> started, Throwable error) {
        for (AttemptHandle e : started) {
            e.fail(error);
        }
    }

    /** Takes the shipment to DONE (unless it is); the winner cancels its delivery and ends its attempts CANCELLED. */
    void cancel(Shipment s, Throwable cause) {
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

    TaskCancelledException cancelled(@Nullable Throwable cause) {
        Throwable why = cause != null ? cause : run.stopCause();
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
    static final class Shipment {

        final AtomicInteger phase = new AtomicInteger();
        volatile @Nullable Flight flight;
    }

    /** One delivery of a shipment: its started attempts, its phase, its number on the wire, the members lost so far. */
    static final class Flight {

        final Shipment shipment;
        final List<AttemptHandle> started;
        final int delivery;
        final int number;
        final Set<String> lost;
        volatile @Nullable SubmittedSlice submitted;

        Flight(Shipment shipment, List<AttemptHandle> started, int delivery, Set<String> lost, int number) {
            this.shipment = shipment;
            this.number = number;
            this.started = started;
            this.delivery = delivery;
            this.lost = lost;
        }
    }
}
