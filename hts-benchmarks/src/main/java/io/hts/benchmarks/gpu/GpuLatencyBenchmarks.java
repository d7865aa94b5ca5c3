package io.hts.benchmarks.gpu;

import static io.hts.benchmarks.gpu.GpuBenchmarks.f;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.cuda.JCudaApi;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Arrays;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.runtime.cudaStream_t;

/**
 * The latency of a one-task GPU run (issue 12 item 10): {@code scheduler.execute()} of a graph of
 * one GEMM task against the same cuBLAS call plus {@code cuStreamSynchronize} from the caller's
 * thread, interleaved run by run, median (and 90th percentile) over {@code runs} runs, for a 256²
 * and an 8192² FP32 GEMM. Each side records CUDA events around its GEMM on its own stream, so the
 * kernels' device times are compared too (they differ by up to 1 % with the card's history, which
 * the alternating order evens out). The HTS time is split by the body's own clock reads and the
 * run's profile: from the call to the body's start (submission, placement and, unless the caller
 * launched the task itself, the hand-off to the device's launcher), the body (the cuBLAS enqueue),
 * from the body's end to the task's end (the device work and seeing it complete), and from the
 * task's end to the caller's return; each split separately for runs that follow an HTS run and
 * runs that follow the direct call (the launcher idle for one GEMM longer). Measured twice: with
 * the default settings, and with the launcher kept hot (spinning 25 ms when idle and while work
 * is in flight), at the cost of one core per device.
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
        StringBuilder out = new StringBuilder(
                "# One-task GPU run latency, " + found.devices().get(0) + ", " + LocalDate.now() + ", median (p90) of "
                        + runs + " runs\n\n| what | HTS | direct | overhead |\n|---|---|---|---|\n");
        new GpuLatencyBenchmarks(
                        found.api(),
                        found.devices().get(0),
                        runs,
                        (what, hts, baseline, ratio) -> out.append("| ")
                                .append(what)
                                .append(" | ")
                                .append(hts)
                                .append(" | ")
                                .append(baseline)
                                .append(" | ")
                                .append(ratio)
                                .append(" |\n"))
                .run();
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
        run(
                new GpuSettings(
                        defaults.streams(), defaults.memory(), defaults.stagingBytes(), Duration.ofMillis(25), true),
                " [launcher spinning 25 ms when idle and while busy]");
    }

    private void run(GpuSettings settings, String variant) {
        GpuBackend gpu = new GpuBackend(api, device, settings, true);
        if (gpu.cublasProblem().isPresent()) {
            rows.row(
                    "one-task GPU run latency",
                    "cuBLAS unavailable: " + gpu.cublasProblem().get(),
                    "",
                    "");
            gpu.close();
            return;
        }
        api.makeCurrent(device.ordinal());
        CUstream stream = new CUstream();
        JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        cublasHandle handle = new cublasHandle();
        JCublas2.cublasCreate(handle);
        JCublas2.cublasSetStream(handle, new cudaStream_t(stream));
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .build()) {
            warmUp(s, gpu);
            for (int n : new int[] {256, 8192}) {
                measure(s, gpu, handle, stream, n, variant);
            }
        } finally {
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
        try (DeviceBuffer a = gpu.memory().allocate(4L * n * n);
                DeviceBuffer b = gpu.memory().allocate(4L * n * n);
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
        // device time of each side's kernel, by events recorded around the GEMM on its own stream
        CUevent[] kernel = new CUevent[4];
        for (int k = 0; k < kernel.length; k++) {
            kernel[k] = new CUevent();
            JCudaDriver.cuEventCreate(kernel[k], CUevent_flags.CU_EVENT_DEFAULT);
        }
        long[] bodyStamps = new long[2];
        try {
            TaskGraph one = TaskGraph.named("gemm-latency-" + n);
            one.task("gemm").gpu(ctx -> {
                bodyStamps[0] = System.nanoTime();
                GpuContext g = ctx.unwrap(GpuContext.class);
                CUstream own = JCudaApi.handle(g.stream());
                JCudaDriver.cuEventRecord(kernel[0], own);
                g.blas().gemm(Blas.Precision.FP32, n, n, n, 1f, a, b, 0f, c);
                JCudaDriver.cuEventRecord(kernel[1], own);
                bodyStamps[1] = System.nanoTime();
                return null;
            });
            int warm = Math.max(20, runs / 10);
            Sample hts = new Sample(runs);
            Sample direct = new Sample(runs);
            // the HTS run split by the run's profile and the body's own clock reads, and by what ran
            // just before it on this thread: the HTS run before it, or the direct call
            String[] steps = {
                "call to body start (submission, placement, hand-off)",
                "body (cuBLAS enqueue, two events)",
                "body end to task end (device work, completion seen)",
                "task end to the caller's return",
                "HTS kernel on the device",
                "direct: cuBLAS enqueue (and two events)",
                "direct: synchronize",
                "direct kernel on the device"
            };
            Sample[][] split = new Sample[2][steps.length];
            for (Sample[] row : split) {
                for (int k = 0; k < row.length; k++) {
                    row[k] = new Sample(runs);
                }
            }
            boolean lastWasHts = false;
            for (int i = -warm; i < runs; i++) {
                boolean htsFirst = (i & 1) == 0;
                long h = 0;
                long d = 0;
                long htsStart = 0;
                long directEnqueued = 0;
                boolean afterHts = false;
                GraphRun run = null;
                for (boolean htsNow : new boolean[] {htsFirst, !htsFirst}) {
                    long start = System.nanoTime();
                    if (htsNow) {
                        afterHts = lastWasHts;
                        htsStart = start;
                        run = s.execute(one);
                        h = System.nanoTime() - start;
                    } else {
                        JCudaDriver.cuEventRecord(kernel[2], stream);
                        DirectGemm.gemm(handle, Blas.Precision.FP32, n, a, b, c);
                        JCudaDriver.cuEventRecord(kernel[3], stream);
                        directEnqueued = System.nanoTime() - start;
                        JCudaDriver.cuStreamSynchronize(stream);
                        d = System.nanoTime() - start;
                    }
                    lastWasHts = htsNow;
                }
                if (i >= 0) {
                    hts.add(h);
                    direct.add(d);
                    TaskTiming t = run.profile().tasks().get(0);
                    float[] ms = new float[2];
                    JCudaDriver.cuEventElapsedTime(ms, kernel[0], kernel[1]);
                    float[] directMs = new float[1];
                    JCudaDriver.cuEventElapsedTime(directMs, kernel[2], kernel[3]);
                    long submitted = bodyStamps[0] - t.startNanos(); // the profile's times count from submission
                    long[] values = {
                        bodyStamps[0] - htsStart,
                        bodyStamps[1] - bodyStamps[0],
                        submitted + t.endNanos() - bodyStamps[1],
                        htsStart + h - submitted - t.endNanos(),
                        (long) (ms[0] * 1e6),
                        directEnqueued,
                        d - directEnqueued,
                        (long) (directMs[0] * 1e6)
                    };
                    Sample[] row = split[afterHts ? 0 : 1];
                    for (int k = 0; k < values.length; k++) {
                        row[k].add(values[k]);
                    }
                }
            }
            long overhead = hts.median() - direct.median();
            rows.row(
                    f(
                            "GEMM %d² FP32, one-task run (scheduler.execute) vs one cuBLAS call + cuStreamSynchronize%s",
                            n, variant),
                    f("%s µs", hts.medianAndP90()),
                    f("%s µs", direct.medianAndP90()),
                    f("%+.1f µs a run (goal ≤ 30 µs: %s)", overhead / 1e3, overhead <= 30_000 ? "met" : "missed"));
            for (int after = 0; after < 2; after++) {
                StringBuilder medians = new StringBuilder();
                for (int k = 0; k < steps.length; k++) {
                    medians.append(k == 0 ? "" : " / ").append(f("%.1f", split[after][k].median() / 1e3));
                }
                rows.row(
                        f(
                                "diagnosis %d², %d runs after %s: %s",
                                n,
                                split[after][0].size(),
                                after == 0 ? "an HTS run" : "the direct call",
                                String.join(" / ", steps)),
                        medians + " µs (medians)",
                        "",
                        "");
            }
        } finally {
            for (CUevent e : kernel) {
                JCudaDriver.cuEventDestroy(e);
            }
            a.close();
            b.close();
            c.close();
        }
    }

    /** Values of one measured quantity, in nanoseconds. */
    private static final class Sample {
        private long[] values;
        private int size;

        Sample(int capacity) {
            values = new long[Math.max(1, capacity)];
        }

        void add(long value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = value;
        }

        int size() {
            return size;
        }

        long median() {
            return size == 0 ? 0 : sorted()[size / 2];
        }

        String medianAndP90() {
            long[] sorted = sorted();
            return f("%.1f (%.1f)", sorted[size / 2] / 1e3, sorted[(int) (size * 0.9)] / 1e3);
        }

        private long[] sorted() {
            long[] sorted = Arrays.copyOf(values, size);
            Arrays.sort(sorted);
            return sorted;
        }
    }
}
