package io.hts.autoconfigure.actuate;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.exec.PoolStats;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.policy.PolicyType;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.env.Environment;

/**
 * {@code /actuator/hts}: the scheduler's state: the policy, the CPU pool (workers,
 * queues, executed, steals), every device kind with its health and load, each GPU (of several,
 * too) with its health, streams, load and free pool memory, the members of its cluster (with a
 * cluster engine: {@code cluster}), the registered graphs, the active runs
 * with their progress and time so far, and whether the endpoint takes writes ({@code access}). Exposed, like every
 * Actuator endpoint, only when the application says so
 * ({@code management.endpoints.web.exposure.include=hts}); read-only unless
 * {@code management.endpoint.hts.access=unrestricted}, which allows switching the policy,
 * cancelling a run and starting a run of a registered graph (a POST).
 */
@Endpoint(id = "hts", defaultAccess = Access.READ_ONLY)
public class HtsEndpoint implements EnvironmentAware {

    private static final EndpointId ID = EndpointId.of("hts");

    /** The largest active run whose tasks' states are counted for its progress (a pass over them a request). */
    static final int MAX_COUNTED_TASKS = 100_000;

    private final Scheduler scheduler;
    private volatile @Nullable EndpointAccessResolver access;

    /**
     * Creates the endpoint. As a bean its state also says whether it takes writes ({@code access},
     * as the environment's {@code management.endpoint(s).access.*} properties resolve it).
     *
     * @param scheduler the scheduler it reports on
     */
    public HtsEndpoint(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.access = new PropertiesEndpointAccessResolver(environment);
    }

    /**
     * Switches the scheduling policy, cancels a run and/or starts a run of a registered graph.
     * Available only when the application grants it
     * ({@code management.endpoint.hts.access=unrestricted}); read-only otherwise. Every parameter
     * is checked before anything is done.
     *
     * @param policy a policy name ({@code default}, {@code gpu-first}, {@code cpu-first},
     *     {@code round-robin}, {@code shortest-job-first}), or unset
     * @param cancelRun the id of an active run to cancel, or unset
     * @param run the name of a registered graph to start a run of, or unset
     * @return what was done; a 400 naming the accepted policies for an unknown one, the registered
     *     graphs for an unknown graph, why for a registered graph that cannot run on this scheduler
     *     (a GPU-only task without a GPU backend, say); a 404 for a run to cancel that is not active; a 503 when the
     *     scheduler is shut down
     */
    @WriteOperation
    public Object change(@Nullable String policy, @Nullable String cancelRun, @Nullable String run) {
        Long runToCancel;
        try {
            runToCancel = EndpointProblems.number(
                    "cancelRun",
                    cancelRun,
                    Long.MIN_VALUE,
                    Long.MAX_VALUE,
                    "the id of an active run (a whole number), such as a runId of activeRuns");
        } catch (EndpointProblems.Bad bad) {
            return bad.response();
        }
        if (runToCancel != null && scheduler.activeRun(runToCancel).isEmpty()) {
            return EndpointProblems.notFound("run " + runToCancel
                    + " is not active (finished, or never submitted here);" + " nothing was changed");
        }
        TaskGraph graph = run == null ? null : scheduler.registeredGraphs().get(run);
        if (run != null && graph == null) {
            return EndpointProblems.badRequest(
                    "run",
                    run,
                    "no registered graph '" + run + "'; nothing was changed",
                    "the name of a registered graph: "
                            + String.join(", ", scheduler.registeredGraphs().keySet()));
        }
        if (graph != null) {
            try {
                scheduler.validate(graph); // a graph that cannot run here is the request's problem, not a 500
            } catch (GraphValidationException ex) {
                return EndpointProblems.badRequest(
                        "run",
                        run,
                        "graph '" + run + "' cannot run on this scheduler: " + ex.getMessage()
                                + "; nothing was changed",
                        "the name of a registered graph that can run on this scheduler");
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        if (policy != null) {
            PolicyType type;
            try {
                type = PolicyType.fromId(policy);
            } catch (IllegalArgumentException ex) {
                return EndpointProblems.badRequest(
                        "policy",
                        policy,
                        "unknown scheduling policy '" + policy + "'",
                        java.util.Arrays.stream(PolicyType.values())
                                .map(PolicyType::id)
                                .collect(java.util.stream.Collectors.joining(", ")));
            }
            scheduler.setPolicy(type.create());
            out.put("policy", type.id());
        }
        if (runToCancel != null) {
            GraphRun active = scheduler.activeRun(runToCancel).orElse(null);
            out.put("cancelled", active != null && active.cancel());
            out.put("runId", runToCancel);
        }
        if (graph != null) {
            GraphRun started;
            try {
                started = scheduler.submit(graph);
            } catch (RejectedExecutionException ex) {
                Map<String, Object> problem = EndpointProblems.problem(
                        WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE,
                        "Service Unavailable",
                        "the scheduler is shut down: no run of '" + graph.name() + "' was started");
                return new WebEndpointResponse<>(problem, WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
            }
            Map<String, Object> submitted = new LinkedHashMap<>();
            submitted.put("runId", started.runId());
            submitted.put("graph", graph.name());
            out.put("submitted", submitted);
        }
        return out;
    }

    /** The scheduler's state now. */
    @ReadOperation
    public Map<String, Object> state() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("policy", scheduler.policy().name());
        EndpointAccessResolver resolver = access;
        if (resolver != null) {
            out.put(
                    "access",
                    resolver.accessFor(ID, Access.READ_ONLY)
                            .name()
                            .toLowerCase(java.util.Locale.ROOT)
                            .replace('_', '-'));
        }
        out.put(
                "policies",
                java.util.Arrays.stream(PolicyType.values()).map(PolicyType::id).toList());
        out.put(
                "failureMode",
                scheduler
                        .defaultFailureMode()
                        .name()
                        .toLowerCase(java.util.Locale.ROOT)
                        .replace('_', '-'));
        PoolStats pool = scheduler.poolStats();
        Map<String, Object> cpu = new LinkedHashMap<>();
        cpu.put("workers", pool.parallelism());
        cpu.put("queued", pool.queued());
        cpu.put("executed", pool.executed());
        cpu.put("steals", pool.steals());
        cpu.put("shutdown", pool.shutdown());
        out.put("pool", cpu);
        List<Map<String, Object>> devices = new ArrayList<>();
        for (DeviceStatus d : scheduler.systemStatus().devices()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("device", d.device().id());
            devices.add(describe(d, "capacity", m));
        }
        out.put("devices", devices);
        List<Map<String, Object>> gpus = new ArrayList<>();
        scheduler
                .gpu()
                .ifPresent(
                        g -> g.deviceStatuses().forEach(d -> gpus.add(describe(d, "streams", new LinkedHashMap<>()))));
        out.put("gpus", gpus);
        scheduler.cluster().ifPresent(c -> out.put("cluster", cluster(c)));
        Map<String, Object> graphs = new LinkedHashMap<>();
        for (Map.Entry<String, TaskGraph> g : scheduler.registeredGraphs().entrySet()) {
            graphs.put(
                    g.getKey(), new LinkedHashMap<>(Map.of("tasks", g.getValue().size())));
        }
        out.put("graphs", graphs);
        List<Map<String, Object>> runs = new ArrayList<>();
        for (GraphRun r : scheduler.activeRuns()) {
            Map<String, Object> m = new LinkedHashMap<>(); // one key order, one name for the run id (runId)
            m.put("runId", r.runId());
            m.put("graph", r.graph().name());
            m.put("status", r.status().name());
            m.put("submitted", r.submitted().toString());
            // since its submission, by this server's clock (a browser's may be off)
            m.put(
                    "elapsedMillis",
                    Math.max(0, Duration.between(r.submitted(), Instant.now()).toNanos()) / 1e6);
            m.put("tasks", r.graph().size());
            m.put("pendingTasks", r.pendingTasks());
            if (r.graph().size() <= MAX_COUNTED_TASKS) {
                m.put("taskStates", taskStates(r)); // exact, where pendingTasks may lag by a worker's batch
            }
            runs.add(m);
        }
        out.put("activeRuns", runs);
        return out;
    }

    /**
     * The cluster engine's members, as they last published themselves: id, address, whether it is
     * this JVM, CPU slots, GPUs, free GPU memory, health and load (slices running per CPU slot). An
     * engine that cannot answer (its Hazelcast member shut down) gives its error and no members.
     */
    static Map<String, Object> cluster(ClusterEngine engine) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<Map<String, Object>> members = new ArrayList<>();
        try {
            out.put("engine", engine.name());
            for (ClusterMember m : engine.members()) {
                Map<String, Object> member = new LinkedHashMap<>();
                member.put("id", m.id());
                member.put("address", m.address());
                member.put("local", m.local());
                member.put("cpuSlots", m.cpuSlots());
                member.put("gpus", m.gpus());
                member.put("freeDeviceMemoryBytes", m.freeDeviceMemory());
                member.put("health", m.health().name());
                member.put("load", m.load());
                members.add(member);
            }
        } catch (RuntimeException ex) {
            out.put("error", String.valueOf(ex));
        }
        out.put("members", members);
        return out;
    }

    /** How many of an active run's tasks are in each state now. */
    private static Map<String, Integer> taskStates(GraphRun run) {
        int[] counts = new int[TaskState.values().length];
        for (TaskState s : run.states().values()) {
            counts[s.ordinal()]++;
        }
        Map<String, Integer> out = new LinkedHashMap<>();
        for (TaskState s : TaskState.values()) {
            out.put(s.name(), counts[s.ordinal()]);
        }
        return out;
    }

    /** A device's health, load and free memory into {@code m}; its capacity under {@code capacityKey}. */
    private static Map<String, Object> describe(DeviceStatus d, String capacityKey, Map<String, Object> m) {
        m.put("health", d.health().name());
        m.put(capacityKey, d.capacity());
        m.put("queued", d.queued());
        m.put("running", d.running());
        if (d.freeMemoryBytes() >= 0) {
            m.put("freeMemoryBytes", d.freeMemoryBytes()); // absent, not -1, for a device without memory of its own
        }
        m.put("detail", d.detail());
        return m;
    }
}
