package io.hts.autoconfigure.health;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.exec.PoolStats;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.run.Scheduler;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code hts} health contributor: DOWN when the CPU pool has been shut down (the scheduler
 * takes no work), UP otherwise; each device's health and the active runs are in the details.
 *
 * <p>A GPU that is DEGRADED or DOWN leaves HTS UP, since tasks with CPU bodies still run: an
 * application that can do its CPU work is not taken out of its load balancer because of its GPU.
 * That holds for a GPU that went DOWN while running (a sticky CUDA error) and for one that could not
 * be started at all ({@code hts.gpu.enabled=auto}): the {@code gpu} detail then reads
 * {@code DOWN: <device> could not be started: <CUDA call> failed: <CUDA error>} (DEGRADED, naming the
 * GPUs that could not be started, where others of the host run). An application that cannot work
 * without its GPU sets {@code hts.gpu.enabled=true}, which fails start-up instead, or maps the detail
 * in a health indicator of its own.
 *
 * <p>With a cluster engine ({@code hts.cluster.enabled=true}) the {@code cluster} detail gives the
 * members serving HTS work, {@code minimumMembers} and a status: DOWN when the engine cannot list
 * its members or this member is not among them (its Hazelcast member left the cluster or shut down,
 * or the engine was closed), which makes HTS DOWN, since its distributed groups cannot run; DEGRADED
 * when fewer members than {@code hts.cluster.minimum-members} serve, or one of them is DEGRADED or
 * DOWN, which leaves HTS UP, since the members there are (this one included) run the slices; UP
 * otherwise. A DEGRADED or DOWN cluster says why under {@code reason}.
 */
public class HtsHealthIndicator implements HealthIndicator {

    private final Scheduler scheduler;
    private final int minimumMembers;

    /**
     * Creates the indicator, for a cluster of one member or more.
     *
     * @param scheduler the scheduler it reports on
     */
    public HtsHealthIndicator(Scheduler scheduler) {
        this(scheduler, 1);
    }

    /**
     * Creates the indicator.
     *
     * @param scheduler the scheduler it reports on
     * @param minimumMembers the members (this one included) below which the cluster is DEGRADED
     */
    public HtsHealthIndicator(Scheduler scheduler, int minimumMembers) {
        this.scheduler = scheduler;
        this.minimumMembers = minimumMembers;
    }

    @Override
    public Health health() {
        PoolStats pool = scheduler.poolStats();
        Map<String, Object> cluster = scheduler.cluster().map(this::cluster).orElse(null);
        boolean clusterDown = cluster != null && DeviceHealth.DOWN.name().equals(cluster.get("status"));
        Health.Builder health = pool.shutdown() || clusterDown ? Health.down() : Health.up();
        health.withDetail("workers", pool.parallelism())
                .withDetail("activeRuns", scheduler.activeRuns().size());
        for (DeviceStatus d : scheduler.systemStatus().devices()) {
            health.withDetail(
                    d.device().id(),
                    d.health() == DeviceHealth.UP
                            ? Status.UP.getCode()
                            : d.health().name() + ": " + d.detail());
        }
        if (cluster != null) {
            health.withDetail("cluster", cluster);
        }
        return health.build();
    }

    /**
     * The cluster's detail: its status by the rules of the class comment, the members serving HTS
     * work, the minimum, and why when not UP.
     */
    private Map<String, Object> cluster(ClusterEngine engine) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<ClusterMember> members;
        try {
            members = engine.members();
        } catch (RuntimeException ex) {
            out.put("status", DeviceHealth.DOWN.name());
            out.put("members", 0);
            out.put("minimumMembers", minimumMembers);
            out.put("reason", "the cluster engine cannot list its members: " + ex);
            return out;
        }
        List<String> unwell = new ArrayList<>();
        boolean local = false;
        for (ClusterMember m : members) {
            local |= m.local();
            if (m.health() != DeviceHealth.UP) {
                unwell.add(m + " is " + m.health());
            }
        }
        String reason = null;
        DeviceHealth status = DeviceHealth.UP;
        if (!local) {
            status = DeviceHealth.DOWN;
            reason = "this member serves no slices: it left the cluster, or its engine was closed";
        } else if (members.size() < minimumMembers) {
            status = DeviceHealth.DEGRADED;
            reason = members.size() + " of at least " + minimumMembers + " members (hts.cluster.minimum-members)";
        } else if (!unwell.isEmpty()) {
            status = DeviceHealth.DEGRADED;
            reason = String.join("; ", unwell);
        }
        out.put("status", status.name());
        out.put("members", members.size());
        out.put("minimumMembers", minimumMembers);
        if (reason != null) {
            out.put("reason", reason);
        }
        return out;
    }
}
