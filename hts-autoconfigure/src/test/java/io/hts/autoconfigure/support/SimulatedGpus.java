package io.hts.autoconfigure.support;

import io.hts.autoconfigure.GpuDiscoverer;
import io.hts.gpu.support.SimulatedCuda;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;

/**
 * The auto-configuration's GPU backends on simulated devices: the application's {@link
 * GpuDiscoverer} finds the devices of a {@link SimulatedCuda} instead of the real driver, and each
 * device's pool is {@link #SMALL_POOL}, so that several fit the simulated memory.
 */
public final class SimulatedGpus {

    /** A pool that starts with one 4 MiB arena and grows in 4 MiB arenas to 32 MiB. */
    public static final String[] SMALL_POOL = {
        "hts.gpu.memory-pool.initial=4MB", "hts.gpu.memory-pool.maximum=32MB", "hts.gpu.memory-pool.arena-size=4MB"
    };

    private SimulatedGpus() {}

    /** {@code runner} whose application discovers the devices of {@code cuda}, each with {@link #SMALL_POOL}. */
    public static <R extends AbstractApplicationContextRunner<R, ?, ?>> R on(SimulatedCuda cuda, R runner) {
        return discovering(cuda, runner).withPropertyValues(SMALL_POOL);
    }

    /** {@code runner} whose application discovers the devices of {@code cuda}, with the pool as configured. */
    public static <R extends AbstractApplicationContextRunner<R, ?, ?>> R discovering(SimulatedCuda cuda, R runner) {
        return runner.withBean(GpuDiscoverer.class, () -> GpuDiscoverer.through(() -> cuda));
    }
}
