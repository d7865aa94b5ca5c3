package io.hts.autoconfigure.metrics;

import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.memory.MemoryStatistics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer gauges of the GPU memory pools, tag {@code device} ({@code cuda:0}, ...):
 * {@code hts.gpu.memory.used} (bytes in allocated blocks), {@code hts.gpu.memory.free} (bytes the
 * pool can hand out now without reserving more), {@code hts.gpu.memory.reserved} (bytes of device
 * memory the pool holds) and {@code hts.gpu.memory.fragmentation} (external fragmentation, 0 when
 * the free memory is one block, towards 1 as it scatters).
 */
public final class HtsGpuMetrics implements MeterBinder {

    private final List<GpuBackend> backends;

    /**
     * Creates the binder.
     *
     * @param backends the GPU backends, one per device
     */
    public HtsGpuMetrics(List<GpuBackend> backends) {
        this.backends = List.copyOf(backends);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (GpuBackend gpu : backends) {
            String device = "cuda:" + gpu.deviceInfo().ordinal();
            gauge(
                    registry,
                    "hts.gpu.memory.used",
                    device,
                    gpu,
                    MemoryStatistics::used,
                    "bytes",
                    "Device memory in allocated blocks of the HTS pool");
            gauge(
                    registry,
                    "hts.gpu.memory.free",
                    device,
                    gpu,
                    MemoryStatistics::free,
                    "bytes",
                    "Device memory the HTS pool can hand out without reserving more");
            gauge(
                    registry,
                    "hts.gpu.memory.reserved",
                    device,
                    gpu,
                    MemoryStatistics::capacity,
                    "bytes",
                    "Device memory the HTS pool holds");
            gauge(
                    registry,
                    "hts.gpu.memory.fragmentation",
                    device,
                    gpu,
                    MemoryStatistics::externalFragmentation,
                    null,
                    "External fragmentation of the HTS pool's free memory, 0 to 1");
        }
    }

    private static void gauge(
            MeterRegistry registry,
            String name,
            String device,
            GpuBackend gpu,
            ToDoubleFunction<MemoryStatistics> value,
            String unit,
            String description) {
        Gauge.builder(name, gpu, g -> value.applyAsDouble(g.memory().statistics()))
                .tag("device", device)
                .baseUnit(unit)
                .description(description)
                .register(registry);
    }
}
