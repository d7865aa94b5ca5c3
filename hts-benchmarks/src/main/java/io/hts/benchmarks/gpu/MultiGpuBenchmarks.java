package io.hts.benchmarks.gpu;

import static io.hts.benchmarks.gpu.GpuBenchmarks.f;
import static io.hts.benchmarks.gpu.GpuBenchmarks.timed;
import static io.hts.benchmarks.gpu.Matrices.checkProduct;
import static io.hts.benchmarks.gpu.Matrices.fillRandom;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.parallel.TiledGemm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Issue 6: GEMM on host matrices (8192² and 16384², FP32 / TF32 / BF16) on one GPU against the
 * same product split by rows over every GPU of the host ({@code TiledGemm.devices}, on a
 * {@link MultiGpuBackend}); scaling efficiency = t1 / (N t_N). On a one-GPU host the split runs on
 * that GPU alone, which measures what the multi-device path costs. Prints a Markdown table and
 * writes it to {@code $OUT/multi-gpu-benchmarks.md}.
 *
 * <p>{@code bash .device/run.sh main io.hts.benchmarks.gpu.MultiGpuBenchmarks [quick]}
 */
public final class MultiGpuBenchmarks {

    private MultiGpuBenchmarks() {}

    public static void main(String[] args) throws Exception {
        boolean quick = args.length > 0 && args[0].equals("quick");
        MultiGpuBackend gpus = MultiGpuBackend.startOnAllDevices(total -> GpuSettings.defaults(total / 10 * 4))
                .orElse(null);
        if (gpus == null) {
            System.err.println("no GPU");
            System.exit(2);
        }
        int count = gpus.devices().size();
        int[] all = IntStream.range(0, count)
                .map(i -> gpus.devices().get(i).deviceInfo().ordinal())
                .toArray();
        List<String> rows = new ArrayList<>();
        rows.add("| GEMM on host matrices | one GPU: TiledGemm, 8 bands, on a plain GpuBackend | split over " + count
                + " GPU(s): TiledGemm.devices(all), 8 bands each, on the MultiGpuBackend | t1 / (N tN) |");
        rows.add("|---|---|---|---|");
        GpuBackend first = gpus.devices().get(0);
        GpuBackend alone = new GpuBackend(
                first.cuda(),
                first.deviceInfo(),
                GpuSettings.defaults(first.deviceInfo().totalMemory() / 10 * 4),
                true);
        try (Scheduler s = Scheduler.builder()
                        .threads(4)
                        .policy(new GpuFirstPolicy())
                        .gpuBackend(gpus)
                        .build();
                Scheduler single = Scheduler.builder()
                        .threads(4)
                        .policy(new GpuFirstPolicy())
                        .gpuBackend(alone)
                        .build()) {
            for (int n : quick ? new int[] {4096} : new int[] {8192, 16384}) {
                long most = 4L * n * n;
                ByteBuffer[] host = new ByteBuffer[3];
                io.hts.gpu.memory.PinnedStagingPool.Staging[] pinned =
                        new io.hts.gpu.memory.PinnedStagingPool.Staging[3];
                for (int i = 0; i < 3; i++) {
                    pinned[i] = first.pinnedStaging().acquire(most);
                    host[i] = pinned[i].buffer();
                }
                for (Blas.Precision p :
                        new Blas.Precision[] {Blas.Precision.FP32, Blas.Precision.TF32, Blas.Precision.BF16}) {
                    int bytes = (int) ((long) p.elementBytes() * n * n);
                    ByteBuffer a = host[0].slice(0, bytes).order(ByteOrder.nativeOrder());
                    ByteBuffer b = host[1].slice(0, bytes).order(ByteOrder.nativeOrder());
                    ByteBuffer c = host[2].slice(0, bytes).order(ByteOrder.nativeOrder());
                    fillRandom(a, p, 21);
                    fillRandom(b, p, 22);
                    TaskGraph one = TaskGraph.named("gemm-one-gpu-" + p + "-" + n);
                    TiledGemm.of(p, n, n, n).tiles(8).addTo(one, "gemm", a, b, c);
                    TaskGraph split = TaskGraph.named("gemm-split-" + p + "-" + n);
                    TiledGemm.of(p, n, n, n).devices(all).tiles(8).addTo(split, "gemm", a, b, c);
                    double t1 = Double.MAX_VALUE;
                    double tn = Double.MAX_VALUE;
                    String check = "";
                    for (int round = 0; round < 5; round++) { // round 0 warms up; the order alternates
                        double x;
                        double y;
                        if (round % 2 == 0) {
                            x = timed(() -> single.execute(one));
                            y = timed(() -> s.execute(split));
                        } else {
                            y = timed(() -> s.execute(split));
                            x = timed(() -> single.execute(one));
                        }
                        if (round == 4) {
                            check = checkProduct(p, n, a, b, c);
                        }
                        if (round > 0) {
                            t1 = Math.min(t1, x);
                            tn = Math.min(tn, y);
                        }
                    }
                    double flops = Blas.gemmFlops(n, n, n);
                    String row = f(
                            "| %d² %s | %.2f ms (%.0f TFLOP/s) | %.2f ms (%.0f TFLOP/s) | %.3f; %s |",
                            n, p, t1 / 1e6, flops / t1 / 1e3, tn / 1e6, flops / tn / 1e3, t1 / (count * tn), check);
                    rows.add(row);
                    System.out.println(row);
                }
                for (io.hts.gpu.memory.PinnedStagingPool.Staging st : pinned) {
                    first.pinnedStaging().release(st);
                }
            }
            rows.add("");
            rows.add(f("placements per device: %s", java.util.Arrays.toString(gpus.placements())));
        }
        StringBuilder out = new StringBuilder("# Multi-GPU GEMM, " + gpus.name() + ", " + LocalDate.now() + "\n\n");
        rows.forEach(r -> out.append(r).append('\n'));
        System.out.println(out);
        String dir = System.getenv("OUT");
        if (dir != null) {
            Files.writeString(Path.of(dir, "multi-gpu-benchmarks.md"), out);
        }
    }
}
