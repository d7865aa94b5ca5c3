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
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * One distributed group of one run, cut into slices of {@code sliceSize} members: a slice goes out
 * once each of its members is READY or was cancelled before it started; it runs on this member
 * (its attempts go to the worker pool as usual) or on another, where its attempts count as RUNNING
 * on the CPU until the member answers, as a device's tasks do until their backend reports.
 *
 * <p><b>Invariants.</b> A member's slot in {@code members} is set once, by a compare-and-set from
 * null: to its attempt by the thread that routed it READY, or to {@code NOT_STARTED} by the thread
 * that cancelled it first; only the winner decrements its slice's {@code unsettled} count, so the
 * count reaches 0 exactly once, and the thread that brings it there sends the slice. A slice's
 * {@code phase} is 0 until it is sent, then the number of its delivery in flight (1, 2... as members
 * are lost under it), then {@code DONE}. Every change of phase is one compare-and-set, and only its
 * winner acts: accepts the outcome (so every member's result counts once, whatever late or repeated
 * answers arrive), sends the slice again, or cancels it. Attempts are reported through the engine's
 * device-task path ({@link TaskExecution#complete}, {@link TaskExecution#fail}), which itself
 * ignores a second report.
 *
 * <p><b>Memory ordering.</b> An attempt stored in its slot happens-before the decrement that
 * settles the slot (both atomic), so the sender sees every slot of its slice. A delivery's
 * {@code Flight} is published through {@code flights} after its phase is set; a canceller that wins
 * the phase reads its attempts from there (a delivery's flight is set before its phase, or holds the
 * same attempts as the one before it); when its {@code submitted} slice is not yet set, the sender
 * sees the phase changed after setting it and cancels the delivery itself.
 */
final class GroupSlices {

    private static final Object NOT_STARTED = new Object();
    private static final int DONE = -1;

    private final GraphRun run;
    private final ClusterLink link;
    private final TaskGroup<?> group;
    private final String fingerprint;
    private final int sliceSize;
    private final boolean localOnly;
    private final PayloadTransfer transfer;

    private final AtomicReferenceArray<@Nullable Object> members;
    private final AtomicIntegerArray unsettled;
    private final AtomicIntegerArray phase;
    private final AtomicReferenceArray<@Nullable Flight> flights;
    /** Slices given to each member in this group (under its own lock; off the hot path: once a slice). */
    private final Map<String, Integer> assigned = new HashMap<>();
    /** The inputs encoded for other members, by task index, each encoded (and stored) once for all slices. */
    private final Map<Integer, CompletableFuture<Payload>> inputs = new ConcurrentHashMap<>();

    GroupSlices(GraphRun run, ClusterLink link, TaskGroup<?> group, String fingerprint, List<ClusterMember> cluster) {
        this.run = run;
        this.link = link;
        this.group = group;
        this.fingerprint = fingerprint;
        int n = group.size();
        int size = n == 0 ? 1 : link.sliceSize(group, cluster);
        this.localOnly = size == 0;
        this.sliceSize = localOnly ? Math.max(1, n) : size;
        int slices = (n + sliceSize - 1) / sliceSize;
        this.transfer = new PayloadTransfer(link.settings, link.engine.payloads());
        this.members = new AtomicReferenceArray<>(n);
        this.unsettled = new AtomicIntegerArray(slices);
        for (int s = 0; s < slices; s++) {
            unsettled.set(s, Math.min(n, (s + 1) * sliceSize) - s * sliceSize);
        }
        this.phase = new AtomicIntegerArray(slices);
        this.flights = new AtomicReferenceArray<>(slices);
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

    /** The slice is settled: to this member's pool, or started and sent to another. */
    private void send(int slice) {
        int lo = slice * sliceSize;
        int hi = Math.min(group.size(), lo + sliceSize);
        ClusterMember target = localOnly ? null : choose(Set.of());
        if (target == null || target.local()) {
            phase.set(slice, DONE);
            for (int k = lo; k < hi; k++) {
                if (members.get(k) instanceof TaskExecution e) {
                    run.pool.submit(e);
                }
            }
            return;
        }
        List<TaskExecution> started = new ArrayList<>(hi - lo);
        for (int k = lo; k < hi; k++) {
            if (members.get(k) instanceof TaskExecution e && e.start(TaskExecution.REMOTE_LANE)) {
                started.add(e);
            }
        }
        if (started.isEmpty()) {
            phase.set(slice, DONE);
            return;
        }
        Flight first = new Flight(slice, started, 1, new HashSet<>());
        flights.set(slice, first); // before the phase: a canceller that wins the phase finds the attempts
        phase.set(slice, 1);
        deliver(first, target);
    }

    private @Nullable ClusterMember choose(Set<String> excluded) {
        synchronized (assigned) {
            ClusterMember m = link.choose(assigned, excluded);
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
        for (TaskExecution e : f.started) {
            int k = run.graph.task(e.index).groupIndex();
            from = Math.min(from, k);
            to = Math.max(to, k + 1);
        }
        SliceWork work = new SliceWork(
                run.graph.name(),
                fingerprint,
                group.name(),
                from,
                to,
                link.engine.localMember().id(),
                run.runId(),
                f.delivery,
                limit,
                encoded);
        SubmittedSlice submitted;
        try {
            submitted = link.engine.submit(member, work);
        } catch (RuntimeException ex) {
            outcome(f, member, work, null, ex);
            return;
        }
        f.submitted = submitted;
        if (phase.get(f.slice) != f.delivery) {
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
            if (!phase.compareAndSet(f.slice, f.delivery, next)) {
                return; // cancelled meanwhile
            }
            f.lost.add(member.id());
            ClusterMember other = next <= link.settings.sliceAttempts() ? choose(f.lost) : null;
            if (other == null) {
                phase.set(f.slice, DONE);
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
            Flight again = new Flight(f.slice, f.started, next, f.lost);
            flights.set(f.slice, again);
            if (phase.get(f.slice) == next) {
                deliver(again, other);
            } // else cancelled meanwhile: its canceller failed the attempts (the same as the previous delivery's)
            return;
        }
        if (!phase.compareAndSet(f.slice, f.delivery, DONE)) {
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
            if (result.failures().isEmpty()) {
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
        if (phase.compareAndSet(f.slice, f.delivery, DONE)) {
            fail(f.started, error);
        }
    }

    private static void fail(List<TaskExecution> started, Throwable error) {
        for (TaskExecution e : started) {
            e.fail(error);
        }
    }

    // ================================================================== run-level

    /** The run was cancelled: every slice in flight is cancelled on its member and its attempts end CANCELLED. */
    void cancelAll(Throwable cause) {
        for (int s = 0; s < phase.length(); s++) {
            int p = phase.get(s);
            while (p > 0 && !phase.compareAndSet(s, p, DONE)) {
                p = phase.get(s);
            }
            if (p <= 0) {
                continue;
            }
            Flight f = flights.get(s); // set before the phase: this or the previous delivery, same attempts
            if (f == null) {
                continue;
            }
            SubmittedSlice submitted = f.submitted;
            if (submitted != null) {
                submitted.cancel();
            }
            TaskCancelledException cancelled = new TaskCancelledException(
                    "slice of " + group + " cancelled on its member: " + cause.getMessage(), cause);
            fail(f.started, cancelled);
        }
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

    /** One delivery of a slice: its started attempts, its number, and the members lost under it so far. */
    private static final class Flight {

        final int slice;
        final List<TaskExecution> started;
        final int delivery;
        final Set<String> lost;
        volatile @Nullable SubmittedSlice submitted;

        Flight(int slice, List<TaskExecution> started, int delivery, Set<String> lost) {
            this.slice = slice;
            this.started = started;
            this.delivery = delivery;
            this.lost = lost;
        }
    }
}
