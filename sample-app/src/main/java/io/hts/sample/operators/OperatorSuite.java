package io.hts.sample.operators;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.gpu.exec.GpuContext;
import io.hts.sample.SampleProperties;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The benchmark's graph, a chain of stages so that no two measurements share the machine: a CPU
 * warm-up (the JIT compiles the BLAS kernels), then per CPU size {@code cpu-gemm-N-data} (the
 * operands), {@code cpu-gemm-N} (a group of tiles over all workers) and {@code cpu-gemm-N-check};
 * the AXPY the same way in bands; with a GPU, per GPU size its data, one GPU task (uploads, a
 * first run, the timed repetitions) and a check, and the AXPY's; last {@code report}. Each check task compares sampled entries with direct
 * computations and fails the run when one is off.
 */
public final class OperatorSuite {

    /** The AXPY's factor: small, so that many repetitions keep y in range. */
    public static final float ALPHA = 1e-3f;

    private static final double CPU_AXPY_BYTES = 2e9;
    private static final double GPU_AXPY_BYTES = 2e11;
    private static final int GPU_MAX_REPETITIONS = 2_000;

    private final SampleProperties.Operators settings;
    private final int workers;
    private final TaskGraph graph = TaskGraph.named("operators");
    private final List<Task<Measurement>> cells = new ArrayList<>();
    private final Task<OperatorReport> report;
    private @Nullable Task<?> previous;

    /**
     * @param settings sizes and work per measurement
     * @param workers the CPU workers (tiles and bands are cut for them)
     * @param gpu the GPU's description, or {@code null} for no GPU stages
     */
    public OperatorSuite(SampleProperties.Operators settings, int workers, @Nullable String gpu) {
        this.settings = settings;
        this.workers = workers;
        cpuGemm("cpu-warm-up", 384, (int) Math.ceil(1e9 / gemmFlops(384)));
        for (int n : settings.cpuGemmSizes()) {
            cells.add(cpuGemm(
                    "cpu-gemm-" + n, n, Math.max(1, (int) Math.round(settings.cpuGflop() * 1e9 / gemmFlops(n)))));
        }
        cells.add(cpuAxpy());
        if (gpu != null) {
            for (int n : settings.gpuGemmSizes()) {
                cells.add(gpuGemm(n));
            }
            cells.add(gpuAxpy());
        }
        String cpuBlas = CpuOperators.blasName();
        String gpuName = gpu == null ? "none" : gpu;
        this.report = graph.task("report")
                .after(cells)
                .cpu(ctx -> new OperatorReport(
                        cpuBlas,
                        workers,
                        gpuName,
                        cells.stream().map(ctx::input).toList()));
    }

    private static double gemmFlops(int n) {
        return 2.0 * n * n * n;
    }

    /** A task of the chain: after the previous stage. */
    private TaskBuilder next(String name) {
        TaskBuilder b = graph.task(name);
        return previous == null ? b : b.after(previous);
    }

    private Task<Measurement> cpuGemm(String name, int n, int repetitions) {
        Task<Operands.Matrices> data = next(name + "-data").cpu(ctx -> Operands.Matrices.of(n));
        int tile = CpuOperators.tileSize(n, workers);
        int side = CpuOperators.tilesPerSide(n, tile);
        TaskGroup<Stamp> tiles = graph.group(
                name,
                side * side,
                (t, b) -> b.after(data).cpu(ctx -> {
                    Operands.Matrices m = ctx.input(data);
                    return CpuOperators.gemmTile(n, tile, t, repetitions, m.a(), m.b(), m.c());
                }));
        Task<Measurement> check = graph.task(name + "-check").after(data, tiles).cpu(ctx -> {
            Operands.Matrices m = ctx.input(data);
            double error = Operands.checkGemm(name, n, m.a(), m.b(), m.c());
            return Measurement.gemm("CPU", n, repetitions, Stamp.span(ctx.inputs(tiles)), error);
        });
        previous = check;
        return check;
    }

    private Task<Measurement> cpuAxpy() {
        int length = settings.axpyLength();
        int repetitions = Math.max(1, (int) Math.round(CPU_AXPY_BYTES / (12.0 * length)));
        int bands = Math.min(length, 2 * workers);
        Task<Operands.Vectors> data = next("cpu-axpy-data").cpu(ctx -> Operands.Vectors.of(length));
        TaskGroup<Stamp> run = graph.group(
                "cpu-axpy",
                bands,
                (band, b) -> b.after(data).cpu(ctx -> {
                    Operands.Vectors v = ctx.input(data);
                    return CpuOperators.axpyBand(band, bands, repetitions, ALPHA, v.x(), v.y());
                }));
        Task<Measurement> check = graph.task("cpu-axpy-check").after(data, run).cpu(ctx -> {
            Operands.Vectors v = ctx.input(data);
            double error = Operands.checkAxpy("cpu-axpy", ALPHA, repetitions, v.x(), v.y0(), v.y());
            return Measurement.axpy("CPU", length, repetitions, Stamp.span(ctx.inputs(run)), error);
        });
        previous = check;
        return check;
    }

    private Task<Measurement> gpuGemm(int n) {
        String name = "gpu-gemm-" + n;
        int repetitions =
                (int) Math.max(1, Math.min(GPU_MAX_REPETITIONS, Math.round(settings.gpuGflop() * 1e9 / gemmFlops(n))));
        Task<Operands.Matrices> data = next(name + "-data").cpu(ctx -> Operands.Matrices.of(n));
        Task<GpuOperators.GpuGemm> run = graph.task(name).after(data).gpu(ctx -> {
            Operands.Matrices m = ctx.input(data);
            return GpuOperators.gemm(ctx.unwrap(GpuContext.class), n, repetitions, m.a(), m.b());
        });
        Task<Measurement> check = graph.task(name + "-check").after(data, run).cpu(ctx -> {
            GpuOperators.GpuGemm g = ctx.input(run);
            float[] product = g.product();
            GpuOperators.Timing timing = g.timing();
            if (product == null || timing == null) {
                return new Measurement("GEMM", n, "GPU", Double.NaN, 0, 0, String.valueOf(g.unavailable()));
            }
            Operands.Matrices m = ctx.input(data);
            double error = Operands.checkGemm(name, n, m.a(), m.b(), product);
            return Measurement.gemm("GPU", n, repetitions, Stamp.span(List.of(timing.stamp())), error);
        });
        previous = check;
        return check;
    }

    private Task<Measurement> gpuAxpy() {
        int length = settings.axpyLength();
        int repetitions = (int) Math.max(1, Math.min(1_000, Math.round(GPU_AXPY_BYTES / (12.0 * length))));
        Task<Operands.Vectors> data = next("gpu-axpy-data").cpu(ctx -> Operands.Vectors.of(length));
        Task<GpuOperators.GpuAxpy> run = graph.task("gpu-axpy").after(data).gpu(ctx -> {
            Operands.Vectors v = ctx.input(data);
            return GpuOperators.axpy(ctx.unwrap(GpuContext.class), repetitions, ALPHA, v.x(), v.y0());
        });
        Task<Measurement> check = graph.task("gpu-axpy-check").after(data, run).cpu(ctx -> {
            Operands.Vectors v = ctx.input(data);
            GpuOperators.GpuAxpy a = ctx.input(run);
            double error = Operands.checkAxpy("gpu-axpy", ALPHA, repetitions, v.x(), v.y0(), a.y());
            return Measurement.axpy(
                    "GPU", length, repetitions, Stamp.span(List.of(a.timing().stamp())), error);
        });
        previous = check;
        return check;
    }

    /** The graph. */
    public TaskGraph graph() {
        return graph;
    }

    /** The report, whose result is the run's. */
    public Task<OperatorReport> report() {
        return report;
    }
}
