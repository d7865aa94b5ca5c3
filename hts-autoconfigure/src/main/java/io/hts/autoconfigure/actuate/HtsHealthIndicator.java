package io.hts.autoconfigure.actuate;

import io.hts.engine.exec.PoolStats;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.run.Scheduler;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code hts} health contributor: DOWN when the CPU pool has been shut down (the scheduler
 * takes no work), UP otherwise; each device's health (a GPU that is DEGRADED or DOWN leaves HTS UP,
 * since tasks with CPU bodies still run, and is reported in the details) and the active runs are
 * in the details.
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
        health.withDetail("workers", pool.parallelism()).withDetail("activeRuns", scheduler.activeRuns().size());
        for (DeviceStatus d : scheduler.systemStatus().devices()) {
            health.withDetail(d.device().id(), d.health() == DeviceHealth.UP ? Status.UP.getCode()
                    : d.health().name() + ": " + d.detail());
        }
        return health.build();
    }
}
