package io.hts.engine.run;

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
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
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

    SliceService(Scheduler scheduler, ClusterLink link) {
        this.scheduler = scheduler;
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
        DeviceBackend gpu = scheduler.gpuBackend();
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
        Set<Throwable> thrownByBodies = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
        TaskGroup<Object> tasks = slice.group(
                group.name(),
                work.size(),
                (k, t) -> work.skipped().contains(work.from() + k)
                        ? t.cpu(ctx -> null) // cancelled on the coordinator before the slice went: not run
                        : member(group.get(work.from() + k), t, inputs, bodyNanos, onGpu, thrownByBodies));
        GraphRun run;
        try {
            run = scheduler.submit(slice, RunOptions.failureMode(FailureMode.CONTINUE));
        } catch (RejectedExecutionException ex) {
            result.completeExceptionally(new MemberLostException(self() + " is shutting down and takes no slices", ex));
            return;
        } catch (RuntimeException ex) { // the slice cannot run here (a resource this scheduler does not declare)
            result.completeExceptionally(ex);
            return;
        }
        running.incrementAndGet();
        runningBy.merge(work.coordinator(), 1, Integer::sum);
        Future<?> timeout = work.timeLimit() == null
                ? null
                : scheduler
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
            answer(work, group, run, tasks, bodyNanos.sum(), onGpu.get(), thrownByBodies, result);
        });
    }

    /**
     * One member of the slice's group: the member's own bodies, reading the inputs sent; what they
     * throw is added to {@code thrownByBodies} (their texts are the user's, never rewritten).
     */
    @SuppressWarnings("unchecked")
    private static Task<Object> member(
            Task<?> member,
            TaskBuilder t,
            Map<String, @Nullable Object> inputs,
            LongAdder bodyNanos,
            AtomicInteger onGpu,
            Set<Throwable> thrownByBodies) {
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
                        thrownByBodies.add(thrown);
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
                        thrownByBodies.add(thrown);
                        throw thrown;
                    }
                };
        if (cpuHere != null && gpuHere != null) {
            return t.bodies(cpuHere, gpuHere);
        }
        return cpuHere != null ? t.cpu(cpuHere) : t.gpu(Objects.requireNonNull(gpuHere));
    }

    private void answer(
            SliceWork work,
            TaskGroup<?> group,
            GraphRun run,
            TaskGroup<Object> tasks,
            long bodyNanos,
            int gpuMembers,
            Set<Throwable> thrownByBodies,
            CompletableFuture<SliceResult> result) {
        List<@Nullable Object> values = new ArrayList<>(tasks.size());
        Map<Integer, SliceResult.RemoteFailure> failures = new HashMap<>();
        for (int k = 0; k < tasks.size(); k++) {
            Task<?> t = tasks.get(k);
            if (run.state(t) == TaskState.SUCCEEDED) {
                values.add(run.result(t));
            } else {
                values.add(null);
                Throwable cause = run.error(t).orElse(null);
                failures.put(
                        work.from() + k, failure(group.get(work.from() + k).name(), t.name(), cause, thrownByBodies));
            }
        }
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

    /**
     * A member's failure as text. The slice runs here as a group of its own, whose members are named
     * by their place in the slice ({@code k[1]} for {@code k[3]}): texts this member's engine wrote
     * (a cancel, a refused GPU) quote that name, so in them {@code 'k[1]'} becomes {@code 'k[3]'};
     * a throwable a body threw keeps its text as the user wrote it.
     */
    private static SliceResult.RemoteFailure failure(
            String task, String here, @Nullable Throwable cause, Set<Throwable> thrownByBodies) {
        if (cause == null) {
            return new SliceResult.RemoteFailure(task, "unknown", "", "");
        }
        StringWriter written = new StringWriter();
        cause.printStackTrace(new PrintWriter(written));
        String trace = written.toString();
        String quotedHere = "'" + here + "'";
        String quoted = "'" + task + "'";
        String message = cause.getMessage();
        if (message != null && !thrownByBodies.contains(cause)) {
            message = message.replace(quotedHere, quoted);
        }
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = cause; t != null && seen.add(t); t = t.getCause()) {
            String line = t.toString();
            if (!thrownByBodies.contains(t) && line.contains(quotedHere)) {
                trace = trace.replace(line, line.replace(quotedHere, quoted));
            }
        }
        return new SliceResult.RemoteFailure(task, cause.getClass().getName(), message == null ? "" : message, trace);
    }
}
