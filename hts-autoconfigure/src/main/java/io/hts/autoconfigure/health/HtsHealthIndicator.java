package io.hts.autoconfigure.health;

import io.hts.engine.exec.PoolStats;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.run.Scheduler;
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
 */
public class HtsHealthIndicator implements HealthIndicator {

    private final Scheduler scheduler;

    /**
     * Creates the indicator.
     *
     * @param scheduler the scheduler it reports on
     */
    public HtsHealthIndicator(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    @Override
    public Health health() {
        PoolStats pool = scheduler.poolStats();
        Health.Builder health = pool.shutdown() ? Health.down() : Health.up();
        health.withDetail("workers", pool.parallelism())
                .withDetail("activeRuns", scheduler.activeRuns().size());
        for (DeviceStatus d : scheduler.systemStatus().devices()) {
            health.withDetail(
                    d.device().id(),
                    d.health() == DeviceHealth.UP
                            ? Status.UP.getCode()
                            : d.health().name() + ": " + d.detail());
        }
        return health.build();
    }
}
