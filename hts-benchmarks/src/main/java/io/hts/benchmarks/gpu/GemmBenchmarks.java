package io.hts.benchmarks.gpu;

import static io.hts.benchmarks.gpu.GpuBenchmarks.f;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.JCudaApi;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.runtime.cudaStream_t;

/**
 * The GEMM part of {@link GpuBenchmarks}: the cuBLAS probe and GEMM through chains of HTS GPU
 * tasks against the same cuBLAS calls made directly, with the diagnoses that explain a gap. GEMM
 * with its inputs in host memory is {@link HostGemmBenchmarks}.
 */
final class GemmBenchmarks {

    /** Where a benchmark's result row goes. */
    interface Rows {
        void row(String what, String hts, String baseline, String ratio);
    }

    private final CudaApi api;
    private final DeviceInfo device;
    private final boolean quick;
    private final Rows rows;
    private final GemmDiagnoses diagnoses;

    GemmBenchmarks(CudaApi api, DeviceInfo device, boolean quick, Rows rows) {
        this.api = api;
        this.device = device;
        this.quick = quick;
        this.rows = rows;
        this.diagnoses = new GemmDiagnoses(api, device, rows);
    }

    void runAll() {
        diagnoses.probe();
        gemm();
        new HostGemmBenchmarks(api, device, rows).run();
    }

    private void row(String what, String hts, String baseline, String ratio) {
        rows.row(what, hts, baseline, ratio);
    }

    // ------------------------------------------------------------------ 4. GEMM

    private void gemm() {
        int n = 8192;
        GpuBackend gpu = new GpuBackend(api, device, GpuSettings.defaults(8L << 30), true);
        long t0park = System.nanoTime();
        java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        row(
                "host timer: parkNanos(20 µs) slept / the launcher's spin lead",
                f(
                        "%.0f µs / %.0f µs",
                        (System.nanoTime() - t0park) / 1e3, gpu.spinLead().toNanos() / 1e3),
                "",
                "");
        if (gpu.cublasProblem().isPresent()) {
            row("GEMM", "cuBLAS unavailable: " + gpu.cublasProblem().get(), "", "");
            gpu.close();
            return;
        }
        long bytes32 = 4L * n * n;
        DeviceBuffer a = gpu.memory().allocate(bytes32);
        DeviceBuffer b = gpu.memory().allocate(bytes32);
        DeviceBuffer c = gpu.memory().allocate(bytes32);
        api.makeCurrent(device.ordinal());
        ByteBuffer host = ByteBuffer.allocateDirect((int) bytes32).order(ByteOrder.nativeOrder());
        Random r = new Random(7);
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
            // the caller's one-task path (execute, launch on the caller, polling, the run's end) is
            // compiled by the JIT first, as in a service after its first requests: the one-task
            // rows measure the scheduler, not the interpreter
            TaskGraph warm = TaskGraph.named("warm-up");
            warm.task("warm-up").gpu(ctx -> {
                ctx.unwrap(GpuContext.class).kernels().fill(1, 1f, a);
                return null;
            });
            for (int i = 0; i < 2_000; i++) {
                s.execute(warm);
            }
            for (Blas.Precision p :
                    new Blas.Precision[] {Blas.Precision.FP32, Blas.Precision.TF32, Blas.Precision.BF16}) {
                for (DeviceBuffer m : new DeviceBuffer[] {a, b}) {
                    host.clear();
                    if (p.elementBytes() == 4) {
                        while (host.remaining() >= 4) {
                            host.putFloat(r.nextFloat() - 0.5f);
                        }
                    } else {
                        while (host.remaining() >= 2) {
                            host.putShort((short) (Float.floatToRawIntBits(r.nextFloat() - 0.5f) >>> 16));
                        }
                    }
                    host.flip();
                    JCudaDriver.cuMemcpyHtoD(JCudaApi.pointer(m.address()), Pointer.to(host), bytes32);
                }
                int chain = quick ? 5 : p == Blas.Precision.FP32 ? 10 : 40;
                // HTS: a chain of dependent GPU tasks, each one GEMM (C = A B, again and again)
                TaskGraph g = TaskGraph.named("gemm-chain-" + p);
                io.hts.engine.graph.Task<?> previous = null;
                for (int i = 0; i < chain; i++) {
                    io.hts.engine.graph.TaskBuilder t = g.task("gemm" + i);
                    if (previous != null) {
                        t.after(previous);
                    }
                    previous = t.gpu(ctx -> {
                        ctx.unwrap(GpuContext.class).blas().gemm(p, n, n, n, 1f, a, b, 0f, c);
                        return null;
                    });
                }
                // one task whose body enqueues the whole chain: the per-task path left out
                TaskGraph batch = TaskGraph.named("gemm-batch-" + p);
                long[] hostNanos = new long[1];
                batch.task("gemm-batch-" + p).gpu(ctx -> {
                    long h0 = System.nanoTime();
                    for (int i = 0; i < chain; i++) {
                        ctx.unwrap(GpuContext.class).blas().gemm(p, n, n, n, 1f, a, b, 0f, c);
                    }
                    hostNanos[0] = System.nanoTime() - h0;
                    return null;
                });
                // the same batch in an HTS body, but through the benchmark's own cuBLAS handle bound to
                // the task's stream: tells the backend's handle from its stream and thread
                TaskGraph foreign = TaskGraph.named("gemm-foreign-handle-" + p);
                foreign.task("gemm-foreign-handle-" + p).gpu(ctx -> {
                    GpuContext gc = ctx.unwrap(GpuContext.class);
                    JCublas2.cublasSetStream(handle, new cudaStream_t(JCudaApi.handle(gc.stream())));
                    for (int i = 0; i < chain; i++) {
                        DirectGemm.gemm(handle, p, n, a, b, c);
                    }
                    JCublas2.cublasSetStream(handle, new cudaStream_t(stream));
                    return null;
                });
                TaskGraph one = TaskGraph.named("gemm-one-" + p);
                long[] bodyStamps = new long[3]; // body start, body end, the thread that ran it (1: the caller)
                Thread benchmarkThread = Thread.currentThread();
                one.task("gemm-one-" + p).gpu(ctx -> {
                    bodyStamps[0] = System.nanoTime();
                    ctx.unwrap(GpuContext.class).blas().gemm(p, n, n, n, 1f, a, b, 0f, c);
                    bodyStamps[1] = System.nanoTime();
                    bodyStamps[2] = Thread.currentThread() == benchmarkThread ? 1 : 0;
                    return null;
                });
                // where a one-task run's time goes, summed over the measured runs (see the row below)
                long[] oneSplit = new long[5];
                double direct = Double.MAX_VALUE;
                double hts = Double.MAX_VALUE;
                double single = Double.MAX_VALUE;
                double directSingle = Double.MAX_VALUE;
                boolean failed = false;
                // which runs first in a round: odd rounds HTS, even rounds the direct loop (the card's
                // clocks differ between a segment after a pause and one right after another)
                double[] htsBy = {Double.MAX_VALUE, Double.MAX_VALUE}; // [first, second]
                double[] directBy = {Double.MAX_VALUE, Double.MAX_VALUE};
                for (int round = 0; round < 5 && !failed; round++) { // interleaved; round 0 warms up both
                    boolean htsFirst = round % 2 == 1;
                    double h = Double.NaN;
                    double o;
                    double ds;
                    io.hts.engine.run.GraphRun run = null;
                    long t0;
                    double d = Double.NaN;
                    try {
                        for (boolean htsNow : new boolean[] {htsFirst, !htsFirst}) {
                            t0 = System.nanoTime();
                            if (htsNow) {
                                run = s.execute(g);
                                h = (double) (System.nanoTime() - t0) / chain;
                            } else {
                                for (int i = 0; i < chain; i++) {
                                    DirectGemm.gemm(handle, p, n, a, b, c);
                                }
                                JCudaDriver.cuStreamSynchronize(stream);
                                d = (double) (System.nanoTime() - t0) / chain;
                            }
                        }
                        if (round > 0) {
                            htsBy[htsFirst ? 0 : 1] = Math.min(htsBy[htsFirst ? 0 : 1], h);
                            directBy[htsFirst ? 1 : 0] = Math.min(directBy[htsFirst ? 1 : 0], d);
                        }
                        if (round == 4) {
                            var tasks = run.profile().tasks();
                            double busy = 0;
                            double gaps = 0;
                            for (int i = 0; i < tasks.size(); i++) {
                                busy += tasks.get(i).durationNanos();
                                if (i > 0) {
                                    gaps += tasks.get(i).startNanos()
                                            - tasks.get(i - 1).endNanos();
                                }
                            }
                            row(
                                    f(
                                            "diagnosis %s chain: per task, launch to completion seen / gap to the next launch",
                                            p),
                                    f(
                                            "%.3f ms / %.1f µs",
                                            busy / tasks.size() / 1e6, gaps / Math.max(1, tasks.size() - 1) / 1e3),
                                    f("direct %.3f ms", d / 1e6),
                                    "");
                            diagnoses.polledDirect(handle, stream, p, n, a, b, c, chain, d);
                            long f0 = System.nanoTime();
                            s.execute(foreign);
                            double foreignHandle = (double) (System.nanoTime() - f0) / chain;
                            long b0 = System.nanoTime();
                            s.execute(batch);
                            double batched = (double) (System.nanoTime() - b0) / chain;
                            row(
                                    f(
                                            "diagnosis %s: one HTS task enqueuing all %d GEMMs through the benchmark's own handle"
                                                    + " on the task's stream",
                                            p, chain),
                                    f("%.3f ms a GEMM", foreignHandle / 1e6),
                                    f("backend's handle %.3f ms", batched / 1e6),
                                    "");
                            long d0 = System.nanoTime();
                            for (int i = 0; i < chain; i++) {
                                DirectGemm.gemm(handle, p, n, a, b, c);
                            }
                            double directHost = (double) (System.nanoTime() - d0) / chain;
                            JCudaDriver.cuStreamSynchronize(stream);
                            io.hts.gpu.stream.StreamLease lane = gpu.streams().tryAcquire(); // idle between runs
                            if (lane != null) {
                                JCublas2.cublasSetStream(handle, new cudaStream_t(JCudaApi.handle(lane.stream())));
                                long l0 = System.nanoTime();
                                for (int i = 0; i < chain; i++) {
                                    DirectGemm.gemm(handle, p, n, a, b, c);
                                }
                                api.synchronize(lane.stream());
                                double onLane = (double) (System.nanoTime() - l0) / chain;
                                JCublas2.cublasSetStream(handle, new cudaStream_t(stream));
                                gpu.streams().release(lane);
                                row(
                                        f(
                                                "diagnosis %s: the direct loop from the benchmark's thread on the backend's lane-%d stream",
                                                p, lane.lane()),
                                        f("%.3f ms a GEMM", onLane / 1e6),
                                        f("own stream %.3f ms", d / 1e6),
                                        "");
                            }
                            row(
                                    f(
                                            "diagnosis %s: one HTS task enqueuing all %d GEMMs / host time of one GEMM call in it"
                                                    + " / host time of one direct call",
                                            p, chain),
                                    f("%.3f ms a GEMM / %.1f µs", batched / 1e6, hostNanos[0] / 1e3 / chain),
                                    f("%.1f µs", directHost / 1e3),
                                    "");
                        }
                        // one-task runs and direct calls alternate, each side first in turn, so that
                        // neither gets the card's clocks after the other's pause (they move by a few %)
                        long htsSum = 0;
                        long directSum = 0;
                        for (int i = 0; i < 6; i++) {
                            for (boolean htsNow : new boolean[] {(i & 1) == 0, (i & 1) != 0}) {
                                long t = System.nanoTime();
                                if (htsNow) {
                                    io.hts.engine.run.GraphRun oneRun = s.execute(one);
                                    long back = System.nanoTime();
                                    htsSum += back - t;
                                    if (round > 0) {
                                        var timing = oneRun.profile().tasks().get(0);
                                        long submitted = bodyStamps[0]
                                                - timing.startNanos(); // profile times count from submission
                                        oneSplit[0] += bodyStamps[0] - t;
                                        oneSplit[1] += bodyStamps[1] - bodyStamps[0];
                                        oneSplit[2] += submitted + timing.endNanos() - bodyStamps[1];
                                        oneSplit[3] += back - submitted - timing.endNanos();
                                        oneSplit[4] += bodyStamps[2];
                                    }
                                } else {
                                    DirectGemm.gemm(handle, p, n, a, b, c);
                                    JCudaDriver.cuStreamSynchronize(stream);
                                    directSum += System.nanoTime() - t;
                                }
                            }
                        }
                        o = htsSum / 6.0;
                        ds = directSum / 6.0;
                    } catch (RuntimeException ex) {
                        row(f("GEMM %d² %s", n, p), "failed: " + ex.getMessage(), "", "");
                        failed = true;
                        break;
                    }
                    if (round > 0) {
                        direct = Math.min(direct, d);
                        hts = Math.min(hts, h);
                        single = Math.min(single, o);
                        directSingle = Math.min(directSingle, ds);
                    }
                }
                if (failed) {
                    continue;
                }
                row(
                        f("diagnosis %s order: HTS chain run first / second in a round; direct loop first / second", p),
                        f("%.3f / %.3f ms", htsBy[0] / 1e6, htsBy[1] / 1e6),
                        f("%.3f / %.3f ms", directBy[0] / 1e6, directBy[1] / 1e6),
                        f(
                                "HTS first vs direct first %+.2f %%; HTS second vs direct second %+.2f %%",
                                100 * (htsBy[0] / directBy[0] - 1), 100 * (htsBy[1] / directBy[1] - 1)));
                if (p != Blas.Precision.FP32) {
                    diagnoses.timedChain(s, p, n, a, b, c);
                }
                double spinning = Double.MAX_VALUE;
                GpuBackend spinner = new GpuBackend(
                        api, device, GpuSettings.defaults(1L << 30).withSpinWhileBusy(true), true);
                try (Scheduler spin = Scheduler.builder()
                        .threads(2)
                        .policy(new GpuFirstPolicy())
                        .gpuBackend(spinner)
                        .build()) {
                    for (int round = 0; round < 3; round++) {
                        long t0 = System.nanoTime();
                        spin.execute(g);
                        if (round > 0) {
                            spinning = Math.min(spinning, (double) (System.nanoTime() - t0) / chain);
                        }
                    }
                }
                row(
                        f(
                                "GEMM %d² %s, the same chain with the launcher spinning while work is in flight (spinWhileBusy)",
                                n, p),
                        f("%.3f ms a GEMM", spinning / 1e6),
                        f("%.3f ms", direct / 1e6),
                        f(
                                "%+.2f %% (goal ≤ 2 %%: %s)",
                                100 * (spinning / direct - 1), spinning / direct - 1 <= 0.02 ? "met" : "missed"));
                double flops = Blas.gemmFlops(n, n, n);
                row(
                        f(
                                "GEMM %d² %s, a chain of %d dependent HTS GPU tasks vs the same %d cuBLAS calls on one stream",
                                n, p, chain, chain),
                        f("%.3f ms a GEMM, %.0f TFLOP/s", hts / 1e6, flops / hts / 1e3),
                        f("%.3f ms, %.0f TFLOP/s", direct / 1e6, flops / direct / 1e3),
                        f(
                                "%+.2f %% (goal ≤ 2 %%: %s)",
                                100 * (hts / direct - 1), hts / direct - 1 <= 0.02 ? "met" : "missed"));
                row(
                        f(
                                "GEMM %d² %s, one task run by a waiting caller (scheduler.execute) vs one call + synchronize,"
                                        + " 6 of each alternating",
                                n, p),
                        f("%.3f ms", single / 1e6),
                        f("%.3f ms", directSingle / 1e6),
                        f("%+.0f µs a run", (single - directSingle) / 1e3));
                long measured = 4L * 6;
                row(
                        f(
                                "diagnosis %s one-task runs (%d): call to body start / body / body end to task end / task end to"
                                        + " the caller's return; launched by the caller in",
                                p, measured),
                        f(
                                "%.1f / %.1f / %.1f / %.1f µs (means)",
                                oneSplit[0] / 1e3 / measured,
                                oneSplit[1] / 1e3 / measured,
                                oneSplit[2] / 1e3 / measured,
                                oneSplit[3] / 1e3 / measured),
                        f("%d of %d", oneSplit[4], measured),
                        "");
            }
        }
        JCublas2.cublasDestroy(handle);
        JCudaDriver.cuStreamDestroy(stream);
    }
}
