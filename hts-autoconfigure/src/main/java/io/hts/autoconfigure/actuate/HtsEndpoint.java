package io.hts.autoconfigure.actuate;

import io.hts.engine.exec.PoolStats;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.policy.PolicyType;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code /actuator/hts}: the scheduler's state: the policy, the CPU pool (workers,
 * queues, executed, steals), every device kind with its health and load, each GPU (of several,
 * too) with its health, streams, load and free pool memory, the registered graphs and the active runs. Exposed, like every Actuator endpoint, only when the application says so
 * ({@code management.endpoints.web.exposure.include=hts}); read-only unless
 * {@code management.endpoint.hts.access=unrestricted}, which allows switching the policy and
 * cancelling a run (a POST).
 */
@Endpoint(id = "hts", defaultAccess = Access.READ_ONLY)
public class HtsEndpoint {

    private final Scheduler scheduler;

    /**
     * Creates the endpoint.
     *
     * @param scheduler the scheduler it reports on
     */
    public HtsEndpoint(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    /**
     * Switches the scheduling policy and/or cancels a run. Available only when the application
     * grants it ({@code management.endpoint.hts.access=unrestricted}); read-only otherwise.
     *
     * @param policy a policy name ({@code default}, {@code gpu-first}, {@code cpu-first},
     *     {@code round-robin}, {@code shortest-job-first}), or unset
     * @param cancelRun the id of an active run to cancel, or unset
     * @return what was done; a 400 naming the accepted policies for an unknown one
     */
    @WriteOperation
    public Object change(@Nullable String policy, @Nullable String cancelRun) {
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
            GraphRun run = scheduler.activeRun(runToCancel).orElse(null);
            out.put("cancelled", run != null && run.cancel());
            out.put("runId", runToCancel);
        }
        return out;
    }

    /** The scheduler's state now. */
    @ReadOperation
    public Map<String, Object> state() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("policy", scheduler.policy().name());
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
            m.put("pendingTasks", r.pendingTasks());
            runs.add(m);
        }
        out.put("activeRuns", runs);
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
