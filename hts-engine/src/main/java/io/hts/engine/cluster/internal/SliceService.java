package io.hts.engine.cluster.internal;

import io.hts.engine.cluster.GraphFingerprint;
import io.hts.engine.cluster.GraphRefusedException;
import io.hts.engine.cluster.MemberLostException;
import io.hts.engine.cluster.Payload;
import io.hts.engine.cluster.SliceResult;
import io.hts.engine.cluster.SliceServer;
import io.hts.engine.cluster.SliceWork;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * This member's side of the slices others send: finds the graph registered under the slice's name,
 * refuses it when missing or of another fingerprint, decodes the inputs, and runs the slice's
 * members (their own bodies, reading the inputs sent; on this member's CPU or GPU as its policy
 * decides) as a run of its own on this scheduler, without waiting on any thread; answers with every
 * member's result or failure.
 *
 * <p>Thread-safe: {@code running} is an atomic count, {@code runningBy} the same count by
 * coordinator, changed only by its map's atomic {@code merge} and {@code computeIfPresent} (an entry
 * goes when its count reaches 0; a reader may see the total and the map a slice apart);
 * {@code fingerprints} caches one fingerprint
 * per registered graph object (a graph registered again under the name is fingerprinted again).
 */
final class SliceService implements SliceServer {

    private final Scheduler scheduler;
    private final ClusterLink link;
    private final PayloadTransfer transfer;
    private final AtomicInteger running = new AtomicInteger();
    private final ConcurrentHashMap<String, Integer> runningBy = new ConcurrentHashMap<>();
    private final Map<TaskGraph, String> fingerprints = new ConcurrentHashMap<>();

    SliceService(ClusterLink link) {
        this.scheduler = link.scheduler;
        this.link = link;
        this.transfer = new PayloadTransfer(link.settings, link.engine.payloads());
    }

    @Override
    public CompletionStage<SliceResult> run(SliceWork work) {
        TaskGroup<?> group;
        try {
            group = groupOf(graphOf(work), work);
        } catch (GraphRefusedException ex) {
            return CompletableFuture.failedFuture(ex);
        }
        CompletableFuture<SliceResult> result = new CompletableFuture<>();
        decode(work.inputs()).whenComplete((inputs, ex) -> {
            if (ex != null) {
                result.completeExceptionally(ex);
            } else {
                start(work, group, inputs, result);
            }
        });
        return result;
    }

    @Override
    public double load() {
        return running.get() / (double) scheduler.parallelism();
    }

    @Override
    public Map<String, Double> loadByCoordinator() {
        Map<String, Double> load = new HashMap<>();
        runningBy.forEach((coordinator, n) -> load.put(coordinator, n / (double) scheduler.parallelism()));
        return load;
    }

    @Override
    public DeviceHealth health() {
        return scheduler.isShutdown() ? DeviceHealth.DOWN : DeviceHealth.UP;
    }

    @Override
    public Capacity capacity() {
        DeviceBackend gpu = scheduler.gpu().orElse(null);
        if (gpu == null) {
            return new Capacity(scheduler.parallelism(), 0, 0);
        }
        long free = 0;
        int gpus = 0;
        for (DeviceStatus s : gpu.deviceStatuses()) {
            if (s.health() != DeviceHealth.DOWN) { // a GPU that is DOWN runs nothing: GPU-only slices go elsewhere
                gpus++;
                free += Math.max(0, s.freeMemoryBytes());
            }
        }
        return new Capacity(scheduler.parallelism(), gpus, free);
    }

    private String self() {
        return link.engine.localMember().toString();
    }

    private TaskGraph graphOf(SliceWork work) {
        TaskGraph graph = scheduler.registeredGraphs().get(work.graph());
        if (graph == null) {
            throw new GraphRefusedException(
                    work.graph(),
                    self(),
                    "graph '" + work.graph() + "' is not registered on " + self() + ", which registers "
                            + scheduler.registeredGraphs().keySet() + "; every member must register the same graphs"
                            + " (Scheduler.register, or a TaskGraph bean with the starter)");
        }
        String mine = fingerprints.computeIfAbsent(graph, GraphFingerprint::of);
        if (!mine.equals(work.fingerprint())) {
            throw new GraphRefusedException(
                    work.graph(),
                    self(),
                    "graph '" + work.graph() + "' on " + self() + " has fingerprint " + mine + ", but its coordinator "
                            + work.coordinator() + " sent " + work.fingerprint() + ": the members run different"
                            + " versions of the graph (deploy the same application on every member)");
        }
        return graph;
    }

    private TaskGroup<?> groupOf(TaskGraph graph, SliceWork work) {
        TaskGroup<?> group = graph.find(work.group() + "[" + work.from() + "]")
                .map(Task::group)
                .orElse(null);
        if (group == null || !group.name().equals(work.group()) || !group.isDistributed() || work.to() > group.size()) {
            throw new GraphRefusedException(
                    work.graph(),
                    self(),
                    "graph '" + work.graph() + "' on " + self() + " has no distributed group '" + work.group()
                            + "' with members [" + work.from() + ", " + work.to() + ")");
        }
        return group;
    }

    private CompletableFuture<Map<String, @Nullable Object>> decode(Map<String, Payload> inputs) {
        Map<String, CompletableFuture<@Nullable Object>> decoding = new LinkedHashMap<>();
        inputs.forEach((name, payload) -> decoding.put(name, transfer.receive(payload, false)));
        return CompletableFuture.allOf(decoding.values().toArray(new CompletableFuture<?>[0]))
                .thenApply(v -> {
                    Map<String, @Nullable Object> values = new HashMap<>();
                    decoding.forEach((name, value) -> values.put(name, value.join()));
                    return values;
                });
    }

    /**
     * Runs the slice's members as a run of this scheduler (a group of the same name, so that this
     * member's cost model learns the group's costs, with each member's bodies, declared costs, GPU
     * and resources; no retries or time limits of its own: the coordinator's attempt has them);
     * completes {@code result} when it ends.
     */
    private void start(
            SliceWork work,
            TaskGroup<?> group,
            Map<String, @Nullable Object> inputs,
            CompletableFuture<SliceResult> result) {
        TaskGraph graph = group.graph();
        TaskGraph slice = TaskGraph.named(graph.name());
        LongAdder bodyNanos = new LongAdder();
        AtomicInteger onGpu = new AtomicInteger();
        SliceFailures failures = new SliceFailures(group.name(), work.from(), work.size());
        TaskGroup<Object> tasks = slice.group(
                group.name(),
                work.size(),
                (k, t) -> work.skipped().contains(work.from() + k)
                        ? t.cpu(ctx -> null) // cancelled on the coordinator before the slice went: not run
                        : member(group.get(work.from() + k), t, inputs, bodyNanos, onGpu, failures));
        GraphRun run;
        try {
            RunOptions options = RunOptions.failureMode(FailureMode.CONTINUE);
            // a slice of this member's own run, sent back to it (its other members lost): owed, even after a shutdown
            run = work.coordinator().equals(link.engine.localMember().id())
                    ? link.hooks.submitOwed(slice, options, work.runId())
                    : scheduler.submit(slice, options);
        } catch (RejectedExecutionException ex) {
            result.completeExceptionally(new MemberLostException(self() + " is shutting down and takes no slices", ex));
            return;
        } catch (RuntimeException ex) { // the slice cannot run here (a resource this scheduler does not declare)
            List<@Nullable Object> values = new ArrayList<>(Collections.nCopies(work.size(), null));
            Map<Integer, SliceResult.RemoteFailure> refused = new HashMap<>();
            for (int k = work.from(); k < work.to(); k++) {
                if (!work.skipped().contains(k)) {
                    refused.put(k, failures.of(group.get(k).name(), ex));
                }
            }
            reply(work, values, refused, 0, 0, result);
            return;
        }
        running.incrementAndGet();
        runningBy.merge(work.coordinator(), 1, Integer::sum);
        Future<?> timeout = work.timeLimit() == null
                ? null
                : link.hooks
                        .timer()
                        .schedule((Runnable) run::cancel, work.timeLimit().toNanos(), TimeUnit.NANOSECONDS);
        result.whenComplete((r, ex) -> {
            if (result.isCancelled()) {
                run.cancel(); // the coordinator cancelled the slice
            }
        });
        run.future().whenComplete((r, ex) -> {
            running.decrementAndGet();
            runningBy.computeIfPresent(work.coordinator(), (c, n) -> n == 1 ? null : n - 1);
            if (timeout != null) {
                timeout.cancel(false);
            }
            answer(work, group, run, tasks, bodyNanos.sum(), onGpu.get(), failures, result);
        });
    }

    /**
     * One member of the slice's group: the member's own bodies, reading the inputs sent; what they
     * throw is recorded in {@code failures} (their texts are the user's, never rewritten).
     */
    @SuppressWarnings("unchecked")
    private static Task<Object> member(
            Task<?> member,
            TaskBuilder t,
            Map<String, @Nullable Object> inputs,
            LongAdder bodyNanos,
            AtomicInteger onGpu,
            SliceFailures failures) {
        TaskGraph graph = member.graph();
        t.retries(0).noTimeout();
        for (Device d : Device.values()) {
            long cost = member.costNanos(d);
            if (cost >= 0) {
                t.cost(d, Duration.ofNanos(cost));
            }
        }
        if (member.gpuOrdinal() >= 0) {
            t.onGpu(member.gpuOrdinal());
        }
        member.resources().forEach(t::resource);
        TaskBody<Object> cpu = (TaskBody<Object>) member.cpuBody();
        GpuBody<Object> gpu = (GpuBody<Object>) member.gpuBody();
        TaskBody<Object> cpuHere = cpu == null
                ? null
                : ctx -> {
                    long t0 = System.nanoTime();
                    try {
                        return cpu.run(new SliceContext(ctx, graph, member, inputs));
                    } catch (Throwable thrown) {
                        failures.thrownByBody(thrown);
                        throw thrown;
                    } finally {
                        bodyNanos.add(System.nanoTime() - t0);
                    }
                };
        GpuBody<Object> gpuHere = gpu == null
                ? null
                : ctx -> {
                    onGpu.incrementAndGet();
                    try {
                        return gpu.run(new SliceContext.OnGpu(ctx, graph, member, inputs));
                    } catch (Throwable thrown) {
                        failures.thrownByBody(thrown);
                        throw thrown;
                    }
                };
        if (cpuHere != null && gpuHere != null) {
            return t.bodies(cpuHere, gpuHere);
        }
        return cpuHere != null ? t.cpu(cpuHere) : t.gpu(Objects.requireNonNull(gpuHere));
    }

    /**
     * Answers with the members' results and failures once the slice's run ended; when this member's
     * scheduler was shut down meanwhile and cancelled members of it ({@code shutdownNow}), the slice
     * fails as on a member lost, so that its coordinator sends it to another member.
     */
    private void answer(
            SliceWork work,
            TaskGroup<?> group,
            GraphRun run,
            TaskGroup<Object> tasks,
            long bodyNanos,
            int gpuMembers,
            SliceFailures failures,
            CompletableFuture<SliceResult> result) {
        List<@Nullable Object> values = new ArrayList<>(tasks.size());
        Map<Integer, SliceResult.RemoteFailure> failed = new HashMap<>();
        Throwable cancelled = null;
        for (int k = 0; k < tasks.size(); k++) {
            Task<?> t = tasks.get(k);
            TaskState state = run.state(t);
            if (state == TaskState.SUCCEEDED) {
                values.add(run.result(t));
            } else {
                Throwable error = run.error(t).orElse(null);
                if (state == TaskState.CANCELLED && cancelled == null) {
                    cancelled = error;
                }
                values.add(null);
                failed.put(
                        work.from() + k, failures.of(group.get(work.from() + k).name(), error));
            }
        }
        if (cancelled != null && scheduler.isShutdown() && !result.isDone()) {
            result.completeExceptionally(new MemberLostException(
                    self() + " was shut down while it ran " + work + ": sent to another member", cancelled));
            return;
        }
        reply(work, values, failed, bodyNanos, gpuMembers, result);
    }

    /** Stores the results (by value or reference) and completes {@code result}, unless its coordinator cancelled it. */
    private void reply(
            SliceWork work,
            List<@Nullable Object> values,
            Map<Integer, SliceResult.RemoteFailure> failures,
            long bodyNanos,
            int gpuMembers,
            CompletableFuture<SliceResult> result) {
        String me = link.engine.localMember().id();
        String key = me + "/" + work.coordinator() + "/" + work.runId() + "/" + work.graph() + "/" + work.group() + "/"
                + work.from() + "/" + work.attempt();
        if (result.isDone()) {
            return; // cancelled by its coordinator: nobody reads the results, so they are not stored
        }
        transfer.send(values, key).whenComplete((payload, ex) -> {
            if (ex != null) {
                result.completeExceptionally(ex);
            } else if (!result.complete(new SliceResult(me, payload, failures, bodyNanos, gpuMembers))) {
                transfer.delete(payload); // cancelled while they were stored
            }
        });
    }
}
