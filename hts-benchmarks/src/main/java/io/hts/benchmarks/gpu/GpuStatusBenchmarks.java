package io.hts.benchmarks.gpu;

import static io.hts.benchmarks.gpu.GpuBenchmarks.f;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.memory.MemoryStatistics;
import io.hts.gpu.memory.PoolSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;

/**
 * What a GPU placement pays for the free memory {@code status()} reports (issue 12 item 7): the
 * pool's counters ({@link DeviceMemoryPool#availableBytes()}, what {@code status()} calls now)
 * against the statistics snapshot it used to take (every arena's buddy statistics under their
 * locks, then free plus what the pool may still reserve), with 1 and with 100 arenas, in the same
 * process on the first CUDA device.
 *
 * <p>Run on the GPU machine: {@code bash .device/run.sh main io.hts.benchmarks.gpu.GpuStatusBenchmarks};
 * writes {@code $OUT/gpu-status.md} when {@code OUT} is set.
 */
public final class GpuStatusBenchmarks {

    private static final int CALLS = 200_000;
    private static long sink;

    private GpuStatusBenchmarks() {}

    public static void main(String[] args) throws Exception {
        GpuDiscovery.Result found = GpuDiscovery.discover();
        if (!found.available()) {
            System.err.println("no GPU: " + found.reason());
            System.exit(2);
        }
        CudaApi api = found.api();
        DeviceInfo device = found.devices().get(0);
        api.makeCurrent(device.ordinal());
        StringBuilder out = new StringBuilder(
                "# status() free memory, " + device + ", " + LocalDate.now() + ", ns a call, best of 5 x " + CALLS
                        + "\n\n| arenas | counters (now) | snapshot (before) | ratio |\n|---|---|---|---|\n");
        for (int arenas : new int[] {1, 100}) {
            long arena = 2L << 20;
            try (DeviceMemoryPool pool = new DeviceMemoryPool(
                    api, device.ordinal(), new PoolSettings(arenas * arena, 1L << 30, arena, 256))) {
                for (int i = 0; i < arenas; i++) {
                    pool.allocate(4096); // a live block in each arena, as a busy pool has
                }
                double counters = best(() -> pool.availableBytes());
                double snapshot = best(() -> {
                    MemoryStatistics s = pool.statistics();
                    return s.free() + Math.max(0, pool.settings().maximumBytes() - s.capacity());
                });
                out.append(f("| %d | %.1f ns | %.1f ns | %.3f |%n", arenas, counters, snapshot, counters / snapshot));
            }
        }
        System.out.println(out);
        String dir = System.getenv("OUT");
        if (dir != null) {
            Files.writeString(Path.of(dir, "gpu-status.md"), out);
        }
    }

    private static double best(java.util.function.LongSupplier call) {
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 6; round++) {
            long t0 = System.nanoTime();
            long acc = 0;
            for (int i = 0; i < CALLS; i++) {
                acc += call.getAsLong();
            }
            double ns = (double) (System.nanoTime() - t0) / CALLS;
            sink += acc;
            if (round > 0) {
                best = Math.min(best, ns);
            }
        }
        return best;
    }
}
