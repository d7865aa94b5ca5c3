package io.hts.benchmarks.gpu;

import static io.hts.benchmarks.gpu.GpuBenchmarks.f;
import static io.hts.benchmarks.gpu.GpuBenchmarks.timed;
import static io.hts.benchmarks.gpu.Matrices.checkProduct;
import static io.hts.benchmarks.gpu.Matrices.fillRandom;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.JCudaApi;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.parallel.TiledGemm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.runtime.cudaStream_t;

/**
 * GEMM with A, B and C in pinned host memory: the parts measured one by one (copies in, GEMM,
 * copy out), {@code TiledGemm} against that ideal, against the same bands written by hand on four
 * streams, and in one band (no overlap). Part of {@link GpuBenchmarks}.
 */
final class HostGemmBenchmarks {

    private final CudaApi api;
    private final DeviceInfo device;
    private final GemmBenchmarks.Rows rows;

    HostGemmBenchmarks(CudaApi api, DeviceInfo device, GemmBenchmarks.Rows rows) {
        this.api = api;
        this.device = device;
        this.rows = rows;
    }

    void run() {
        hostGemm();
    }

    private void row(String what, String hts, String baseline, String ratio) {
        rows.row(what, hts, baseline, ratio);
    }

    /**
     * C = A B for 8192² matrices in pinned host memory: HTS's {@link TiledGemm} (B uploaded once, 8
     * bands of rows, each copying in, multiplying and copying out on its own stream) against the
     * ideal of the issue (the copies at the bandwidth measured here plus the GEMM, one after the
     * other), against the same bands written by hand on four streams with events, and against
     * HTS in one band (no overlap).
     */
    private void hostGemm() {
        int n = 8192;
        int bands = 8;
        GpuBackend gpu = new GpuBackend(api, device, GpuSettings.defaults(8L << 30), true);
        if (gpu.cublasProblem().isPresent()) {
            row(
                    "GEMM with inputs on the host",
                    "cuBLAS unavailable: " + gpu.cublasProblem().get(),
                    "",
                    "");
            gpu.close();
            return;
        }
        long most = 4L * n * n;
        api.makeCurrent(device.ordinal());
        ByteBuffer hostA = api.allocatePinned(most);
        ByteBuffer hostB = api.allocatePinned(most);
        ByteBuffer hostC = api.allocatePinned(most);
        DeviceBuffer da = gpu.memory().allocate(most);
        DeviceBuffer db = gpu.memory().allocate(most);
        DeviceBuffer dc = gpu.memory().allocate(most);
        api.makeCurrent(device.ordinal());
        CUstream[] streams = new CUstream[4];
        cublasHandle[] handles = new cublasHandle[4];
        for (int i = 0; i < 4; i++) {
            streams[i] = new CUstream();
            JCudaDriver.cuStreamCreate(streams[i], CUstream_flags.CU_STREAM_NON_BLOCKING);
            handles[i] = new cublasHandle();
            JCublas2.cublasCreate(handles[i]);
            JCublas2.cublasSetStream(handles[i], new cudaStream_t(streams[i]));
        }
        CUevent bReady = new CUevent();
        JCudaDriver.cuEventCreate(bReady, CUevent_flags.CU_EVENT_DISABLE_TIMING);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .build()) {
            for (Blas.Precision p :
                    new Blas.Precision[] {Blas.Precision.FP32, Blas.Precision.TF32, Blas.Precision.BF16}) {
                int e = p.elementBytes();
                long bytes = (long) e * n * n;
                ByteBuffer a = hostA.slice(0, (int) bytes).order(ByteOrder.nativeOrder());
                ByteBuffer b = hostB.slice(0, (int) bytes).order(ByteOrder.nativeOrder());
                ByteBuffer c = hostC.slice(0, (int) bytes).order(ByteOrder.nativeOrder());
                fillRandom(a, p, 11);
                fillRandom(b, p, 12);
                double up = Double.MAX_VALUE;
                double down = Double.MAX_VALUE;
                double compute = Double.MAX_VALUE;
                api.makeCurrent(device.ordinal());
                for (int round = 0; round < 3; round++) {
                    long t0 = System.nanoTime();
                    JCudaDriver.cuMemcpyHtoDAsync(JCudaApi.pointer(da.address()), Pointer.to(a), bytes, streams[0]);
                    JCudaDriver.cuStreamSynchronize(streams[0]);
                    up = Math.min(up, System.nanoTime() - t0);
                    t0 = System.nanoTime();
                    JCudaDriver.cuMemcpyDtoHAsync(Pointer.to(c), JCudaApi.pointer(dc.address()), bytes, streams[0]);
                    JCudaDriver.cuStreamSynchronize(streams[0]);
                    down = Math.min(down, System.nanoTime() - t0);
                    t0 = System.nanoTime();
                    DirectGemm.gemm(handles[0], p, n, n, n, db.address(), da.address(), dc.address());
                    JCudaDriver.cuStreamSynchronize(streams[0]);
                    compute = Math.min(compute, System.nanoTime() - t0);
                }
                double ideal = 2 * up + compute + down;
                TaskGraph tiled = TaskGraph.named("host-gemm-" + p);
                TiledGemm.of(p, n, n, n).tiles(bands).addTo(tiled, "gemm", a, b, c);
                TaskGraph whole = TaskGraph.named("host-gemm-one-band-" + p);
                TiledGemm.of(p, n, n, n).tiles(1).addTo(whole, "gemm", a, b, c);
                double hts = Double.MAX_VALUE;
                double byHand = Double.MAX_VALUE;
                double oneBand = Double.MAX_VALUE;
                String check = "";
                try {
                    for (int round = 0; round < 5; round++) { // round 0 warms up; the order alternates
                        boolean htsFirst = round % 2 == 1;
                        double h = 0;
                        if (htsFirst) {
                            h = timed(() -> s.execute(tiled));
                        }
                        api.makeCurrent(device.ordinal());
                        double d = timed(() -> bandsByHand(p, n, bands, a, b, c, da, db, dc, streams, handles, bReady));
                        if (!htsFirst) {
                            h = timed(() -> s.execute(tiled));
                        }
                        if (round == 4) {
                            check = checkProduct(p, n, a, b, c);
                        }
                        double o = timed(() -> s.execute(whole));
                        if (round > 0) {
                            hts = Math.min(hts, h);
                            byHand = Math.min(byHand, d);
                            oneBand = Math.min(oneBand, o);
                        }
                    }
                } catch (RuntimeException ex) {
                    row(f("GEMM %d² %s with inputs on the host", n, p), "failed: " + ex, "", "");
                    continue;
                }
                row(
                        f("GEMM %d² %s with A, B, C in pinned host memory: measured parts", n, p),
                        f(
                                "copy in %.2f ms a matrix (%.1f GB/s), GEMM %.2f ms, copy out %.2f ms (%.1f GB/s)",
                                up / 1e6, bytes / up, compute / 1e6, down / 1e6, bytes / down),
                        f("ideal (2 copies in + GEMM + copy out) %.2f ms", ideal / 1e6),
                        check);
                row(
                        f("GEMM %d² %s with inputs on the host, TiledGemm (%d bands) vs the ideal", n, p, bands),
                        f("%.2f ms", hts / 1e6),
                        f("%.2f ms", ideal / 1e6),
                        f(
                                "%+.1f %% (goal ≤ 5 %% beyond ideal: %s)",
                                100 * (hts / ideal - 1), hts / ideal - 1 <= 0.05 ? "met" : "missed"));
                row(
                        f(
                                "GEMM %d² %s with inputs on the host, TiledGemm vs the same %d bands by hand on 4 streams",
                                n, p, bands),
                        f("%.2f ms", hts / 1e6),
                        f("%.2f ms", byHand / 1e6),
                        f("%+.1f %%", 100 * (hts / byHand - 1)));
                row(
                        f("GEMM %d² %s with inputs on the host, TiledGemm in one band (no overlap) vs the ideal", n, p),
                        f("%.2f ms", oneBand / 1e6),
                        f("%.2f ms", ideal / 1e6),
                        f("%+.1f %%", 100 * (oneBand / ideal - 1)));
                // with a stream for every band and B's upload, no band waits for a stream to free up
                GpuBackend wideGpu = new GpuBackend(
                        api, device, GpuSettings.defaults(8L << 30).withStreams(bands + 2), true);
                double wide = Double.MAX_VALUE;
                try (Scheduler ws = Scheduler.builder()
                        .threads(2)
                        .policy(new GpuFirstPolicy())
                        .gpuBackend(wideGpu)
                        .build()) {
                    for (int round = 0; round < 4; round++) {
                        double w = timed(() -> ws.execute(tiled));
                        if (round > 0) {
                            wide = Math.min(wide, w);
                        }
                    }
                }
                row(
                        f(
                                "GEMM %d² %s with inputs on the host, TiledGemm on a backend of %d streams vs the same bands by hand",
                                n, p, bands + 2),
                        f("%.2f ms", wide / 1e6),
                        f("%.2f ms", byHand / 1e6),
                        f("%+.1f %% (ideal %+.1f %%)", 100 * (wide / byHand - 1), 100 * (wide / ideal - 1)));
            }
        }
        for (int i = 0; i < 4; i++) {
            JCublas2.cublasDestroy(handles[i]);
            JCudaDriver.cuStreamDestroy(streams[i]);
        }
        JCudaDriver.cuEventDestroy(bReady);
        api.freePinned(hostA);
        api.freePinned(hostB);
        api.freePinned(hostC);
    }

    /** The bands written by hand: B on stream 0, band i on stream i % 4 after B's event. */
    private static void bandsByHand(
            Blas.Precision p,
            int n,
            int bands,
            ByteBuffer a,
            ByteBuffer b,
            ByteBuffer c,
            DeviceBuffer da,
            DeviceBuffer db,
            DeviceBuffer dc,
            CUstream[] streams,
            cublasHandle[] handles,
            CUevent bReady) {
        long e = p.elementBytes();
        long bytes = e * n * n;
        JCudaDriver.cuMemcpyHtoDAsync(JCudaApi.pointer(db.address()), Pointer.to(b), bytes, streams[0]);
        JCudaDriver.cuEventRecord(bReady, streams[0]);
        for (int i = 1; i < streams.length; i++) {
            JCudaDriver.cuStreamWaitEvent(streams[i], bReady, 0);
        }
        int band = (n + bands - 1) / bands;
        for (int i = 0; i < bands; i++) {
            int first = i * band;
            int rows = Math.min(band, n - first);
            CUstream st = streams[i % streams.length];
            long offA = first * n * e;
            long lenA = rows * n * e;
            JCudaDriver.cuMemcpyHtoDAsync(
                    JCudaApi.pointer(da.address() + offA), Pointer.to(a.slice((int) offA, (int) lenA)), lenA, st);
            DirectGemm.gemm(
                    handles[i % handles.length], p, n, rows, n, db.address(), da.address() + offA, dc.address() + offA);
            JCudaDriver.cuMemcpyDtoHAsync(
                    Pointer.to(c.slice((int) offA, (int) lenA)), JCudaApi.pointer(dc.address() + offA), lenA, st);
        }
        for (CUstream st : streams) {
            JCudaDriver.cuStreamSynchronize(st);
        }
    }
}
