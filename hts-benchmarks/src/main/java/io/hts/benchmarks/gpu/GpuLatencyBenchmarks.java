package io.hts.benchmarks.gpu;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Arrays;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.runtime.cudaStream_t;

import static io.hts.benchmarks.gpu.GpuBenchmarks.f;

/**
 * The latency of a one-task GPU run (issue 12 item 10): {@code scheduler.execute()} of a graph of
 * one GEMM task against the same cuBLAS call plus {@code cuStreamSynchronize} from the caller's
 * thread, interleaved run by run, median (and 90th percentile) over {@code runs} runs, for a 256²
 * and an 8192² FP32 GEMM. The HTS time is split with the run's profile: from the call to the
 * body's start (the hand-off to the device's launcher), from the body's start to the task's end
 * (the body, the device work and seeing it complete), and from the task's end to the caller's
 * return (waking the caller). Measured twice: with the default settings, and with the launcher
 * kept hot between calls (spinning 25 ms when idle and while work is in flight), which spares a
 * thread wake-up per call at the cost of one core per device.
 *
 * <p>Run on the GPU machine: {@code bash .device/run.sh main io.hts.benchmarks.gpu.GpuLatencyBenchmarks [runs]};
 * writes {@code $OUT/gpu-latency.md} when {@code OUT} is set. Also part of {@link GpuBenchmarks}.
 */
public final class GpuLatencyBenchmarks {

    private final CudaApi api;
    private final DeviceInfo device;
    private final int runs;
    private final GemmBenchmarks.Rows rows;

    GpuLatencyBenchmarks(CudaApi api, DeviceInfo device, int runs, GemmBenchmarks.Rows rows) {
        this.api = api;
        this.device = device;
        this.runs = runs;
        this.rows = rows;
    }

    public static void main(String[] args) throws Exception {
        GpuDiscovery.Result found = GpuDiscovery.discover();
        if (!found.available()) {
            System.err.println("no GPU: " + found.reason());
            System.exit(2);
        }
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        StringBuilder out = new StringBuilder("# One-task GPU run latency, " + found.devices().get(0) + ", "
                + LocalDate.now() + ", median (p90) of " + runs + " runs\n\n| what | HTS | direct | overhead |\n|---|---|---|---|\n");
        new GpuLatencyBenchmarks(found.api(), found.devices().get(0), runs,
                (what, hts, baseline, ratio) -> out.append("| ").append(what).append(" | ").append(hts).append(" | ")
                        .append(baseline).append(" | ").append(ratio).append(" |\n")).run();
        System.out.println(out);
        String dir = System.getenv("OUT");
        if (dir != null) {
            Files.writeString(Path.of(dir, "gpu-latency.md"), out);
        }
    }

    void run() {
        GpuSettings defaults = GpuSettings.defaults(4L << 30);
        run(defaults, "");
        // a launcher kept hot between calls: no thread wake-up on a dispatch, one core per device
        run(new GpuSettings(defaults.streams(), defaults.memory(), defaults.stagingBytes(), Duration.ofMillis(25), true),
                " [launcher spinning 25 ms when idle and while busy]");
    }

    private void run(GpuSettings settings, String variant) {
        GpuBackend gpu = new GpuBackend(api, device, settings, true);
        if (gpu.cublasProblem().isPresent()) {
            rows.row("one-task GPU run latency", "cuBLAS unavailable: " + gpu.cublasProblem().get(), "", "");
            gpu.close();
            return;
        }
        api.makeCurrent(device.ordinal());
        CUstream stream = new CUstream();
        JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        cublasHandle handle = new cublasHandle();
        JCublas2.cublasCreate(handle);
        JCublas2.cublasSetStream(handle, new cudaStream_t(stream));
        try (Scheduler s = Scheduler.builder().threads(2).policy(new GpuFirstPolicy()).gpuBackend(gpu).build()) {
            warmUp(s, gpu);
            for (int n : new int[] {256, 8192}) {
                measure(s, gpu, handle, stream, n, variant);
            }
        }
        finally {
            JCublas2.cublasDestroy(handle);
            JCudaDriver.cuStreamDestroy(stream);
        }
    }

    /**
     * Compiles the run path (submission, placement, launch, completion, waiting) as a service's
     * steady state has it: 20,000 one-task runs of a small GEMM, a couple of seconds. Without it,
     * 1,000 measured runs would time partly interpreted code.
     */
    private static void warmUp(Scheduler s, GpuBackend gpu) {
        int n = 64;
        try (DeviceBuffer a = gpu.memory().allocate(4L * n * n); DeviceBuffer b = gpu.memory().allocate(4L * n * n);
                DeviceBuffer c = gpu.memory().allocate(4L * n * n)) {
            TaskGraph small = TaskGraph.named("gemm-latency-warm-up");
            small.task("gemm").gpu(ctx -> {
                ctx.unwrap(GpuContext.class).blas().gemm(Blas.Precision.FP32, n, n, n, 1f, a, b, 0f, c);
                return null;
            });
            for (int i = 0; i < 20_000; i++) {
                s.execute(small);
            }
        }
    }

    private void measure(Scheduler s, GpuBackend gpu, cublasHandle handle, CUstream stream, int n, String variant) {
        long bytes = 4L * n * n;
        DeviceBuffer a = gpu.memory().allocate(bytes);
        DeviceBuffer b = gpu.memory().allocate(bytes);
        DeviceBuffer c = gpu.memory().allocate(bytes);
        try {
            TaskGraph one = TaskGraph.named("gemm-latency-" + n);
            one.task("gemm").gpu(ctx -> {
                ctx.unwrap(GpuContext.class).blas().gemm(Blas.Precision.FP32, n, n, n, 1f, a, b, 0f, c);
                return null;
            });
            int warm = Math.max(20, runs / 10);
            long[] hts = new long[runs];
            long[] direct = new long[runs];
            long[] handOff = new long[runs];
            long[] onDevice = new long[runs];
            long[] wake = new long[runs];
            for (int i = -warm; i < runs; i++) {
                boolean htsFirst = (i & 1) == 0;
                long h = 0;
                long d = 0;
                GraphRun run = null;
                for (boolean htsNow : new boolean[] {htsFirst, !htsFirst}) {
                    long start = System.nanoTime();
                    if (htsNow) {
                        run = s.execute(one);
                        h = System.nanoTime() - start;
                    }
                    else {
                        GemmBenchmarks.directGemm(handle, Blas.Precision.FP32, n, a, b, c);
                        JCudaDriver.cuStreamSynchronize(stream);
                        d = System.nanoTime() - start;
                    }
                }
                if (i >= 0) {
                    hts[i] = h;
                    direct[i] = d;
                    TaskTiming t = run.profile().tasks().get(0);
                    handOff[i] = t.startNanos() - t.readyNanos();
                    onDevice[i] = t.endNanos() - t.startNanos();
                    wake[i] = h - (t.endNanos() - t.readyNanos());
                }
            }
            long overhead = median(hts) - median(direct);
            rows.row(f("GEMM %d² FP32, one-task run (scheduler.execute) vs one cuBLAS call + cuStreamSynchronize%s", n,
                    variant),
                    f("%s µs", medianAndP90(hts)), f("%s µs", medianAndP90(direct)),
                    f("%+.1f µs a run (goal ≤ 30 µs: %s)", overhead / 1e3, overhead <= 30_000 ? "met" : "missed"));
            rows.row(f("diagnosis %d²: task ready to body start (hand-off) / body start to task end (body, device,"
                    + " completion seen) / the rest (submission, and the caller seeing the end)", n),
                    f("%.1f / %.1f / %.1f µs", median(handOff) / 1e3, median(onDevice) / 1e3, median(wake) / 1e3),
                    "", "");
        }
        finally {
            a.close();
            b.close();
            c.close();
        }
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static String medianAndP90(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return f("%.1f (%.1f)", sorted[sorted.length / 2] / 1e3, sorted[(int) (sorted.length * 0.9)] / 1e3);
    }
}
