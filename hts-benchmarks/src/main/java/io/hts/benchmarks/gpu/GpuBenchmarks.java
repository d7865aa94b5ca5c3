package io.hts.benchmarks.gpu;


import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;

import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.cuda.JCudaApi;

import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.kernel.KernelCache;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.parallel.TiledGemm;
import jcuda.Pointer;
import jcuda.cudaDataType;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmemLocation;
import jcuda.driver.CUmemPoolProps;
import jcuda.driver.CUmemoryPool;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasComputeType;
import jcuda.jcublas.cublasGemmAlgo;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasMath;
import jcuda.jcublas.cublasOperation;
import jcuda.runtime.cudaStream_t;

/**
 * The GPU benchmarks of issue 4, each beside its baseline in the same process, on the first CUDA
 * device: completion mechanisms, the memory pool against {@code cuMemAlloc} and CUDA's own
 * stream-ordered pool, GEMM through an HTS task against the same cuBLAS call made directly, and
 * 10,000 tiny GPU tasks against a raw launch loop. Prints a Markdown table and writes it to
 * {@code $OUT/gpu-benchmarks.md} when {@code OUT} is set.
 *
 * <p>Run on the GPU machine: {@code bash .device/run.sh main io.hts.benchmarks.gpu.GpuBenchmarks [quick]}.
 */
public final class GpuBenchmarks {

    private final List<String> rows = new ArrayList<>();
    private final boolean quick;
    private final CudaApi api;
    private final DeviceInfo device;

    private GpuBenchmarks(CudaApi api, DeviceInfo device, boolean quick) {
        this.api = api;
        this.device = device;
        this.quick = quick;
    }

    public static void main(String[] args) throws Exception {
        GpuDiscovery.Result found = GpuDiscovery.discover();
        if (!found.available()) {
            System.err.println("no GPU: " + found.reason());
            System.exit(2);
        }
        GpuBenchmarks b = new GpuBenchmarks(found.api(), found.devices().get(0), args.length > 0 && args[0].equals("quick"));
        b.rows.add("| what | HTS | baseline | ratio / overhead |");
        b.rows.add("|---|---|---|---|");
        b.completionMechanisms();
        b.memoryPool();
        b.tinyTasks();
        b.gemmExProbe();
        b.gemm();
        b.hostGemm();
        StringBuilder out = new StringBuilder("# GPU benchmarks, " + b.device + ", " + LocalDate.now() + "\n\n");
        b.rows.forEach(r -> out.append(r).append('\n'));
        System.out.println(out);
        String dir = System.getenv("OUT");
        if (dir != null) {
            Files.writeString(Path.of(dir, "gpu-benchmarks.md"), out);
        }
    }

    private void row(String what, String hts, String baseline, String ratio) {
        String r = "| " + what + " | " + hts + " | " + baseline + " | " + ratio + " |";
        rows.add(r);
        System.out.println(r);
    }

    static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    // ------------------------------------------------------------------ 1. completion mechanisms

    private void completionMechanisms() {
        api.makeCurrent(device.ordinal());
        CUstream stream = new CUstream();
        JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        CUevent event = new CUevent();
        JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING);
        int n = quick ? 500 : 5000;
        for (int round = 0; round < 2; round++) { // the first round warms up
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                JCudaDriver.cuEventRecord(event, stream);
                while (JCudaDriver.cuEventQuery(event) != 0) {
                    Thread.onSpinWait();
                }
            }
            long poll = (System.nanoTime() - t0) / n;
            t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                JCudaDriver.cuEventRecord(event, stream);
                JCudaDriver.cuEventSynchronize(event);
            }
            long sync = (System.nanoTime() - t0) / n;
            AtomicLong seen = new AtomicLong();
            t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long target = i + 1;
                JCudaDriver.cuLaunchHostFunc(stream, data -> seen.set(target), null);
                while (seen.get() != target) {
                    Thread.onSpinWait();
                }
            }
            long host = (System.nanoTime() - t0) / n;
            if (round == 1) {
                row("completion seen by the host: event record + cuEventQuery polling (HTS's choice)", f("%.1f µs", poll / 1e3),
                        f("record + cuEventSynchronize %.1f µs; cuLaunchHostFunc %.1f µs", sync / 1e3, host / 1e3),
                        f("%.2f / %.2f", (double) poll / sync, (double) poll / host));
            }
        }
        JCudaDriver.cuEventDestroy(event);
        JCudaDriver.cuStreamDestroy(stream);
    }

    // ------------------------------------------------------------------ 2. memory pool

    private void memoryPool() throws InterruptedException {
        api.makeCurrent(device.ordinal());
        long size = 1 << 20;
        DeviceMemoryPool pool = new DeviceMemoryPool(api, device.ordinal(),
                io.hts.gpu.memory.PoolSettings.of(256L << 20, 1L << 30));
        int n = quick ? 100_000 : 2_000_000;
        double poolNs = 0;
        for (int round = 0; round < 3; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                pool.allocate(size).close();
            }
            poolNs = (double) (System.nanoTime() - t0) / n;
        }
        int threads = 8;
        Thread[] workers = new Thread[threads];
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                for (int i = 0; i < n / 4; i++) {
                    pool.allocate(size).close();
                }
            });
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        double pool8 = (double) (System.nanoTime() - t0) / (threads * (long) (n / 4));
        int m = quick ? 200 : 2000;
        CUdeviceptr p = new CUdeviceptr();
        double driver = 0;
        for (int round = 0; round < 2; round++) {
            t0 = System.nanoTime();
            for (int i = 0; i < m; i++) {
                JCudaDriver.cuMemAlloc(p, size);
                JCudaDriver.cuMemFree(p);
            }
            driver = (double) (System.nanoTime() - t0) / m;
        }
        CUstream stream = new CUstream();
        JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        // CUDA's stream-ordered allocator on a pool of its own (JCuda 12.6 has no binding for the
        // default pool or its release threshold; without a synchronize in the loop the threshold
        // does not come into play: freed blocks are reused in stream order)
        CUmemoryPool cudaPool = new CUmemoryPool();
        CUmemPoolProps props = new CUmemPoolProps();
        props.allocType = 1; // CU_MEM_ALLOCATION_TYPE_PINNED
        props.location = new CUmemLocation(1, device.ordinal()); // CU_MEM_LOCATION_TYPE_DEVICE
        JCudaDriver.cuMemPoolCreate(cudaPool, props);
        int k = quick ? 20_000 : 200_000;
        double async = 0;
        for (int round = 0; round < 2; round++) {
            t0 = System.nanoTime();
            for (int i = 0; i < k; i++) {
                JCudaDriver.cuMemAllocFromPoolAsync(p, size, cudaPool, stream);
                JCudaDriver.cuMemFreeAsync(p, stream);
            }
            JCudaDriver.cuStreamSynchronize(stream);
            async = (double) (System.nanoTime() - t0) / k;
        }
        JCudaDriver.cuStreamDestroy(stream);
        JCudaDriver.cuMemPoolDestroy(cudaPool);
        pool.close();
        row("1 MiB alloc + free pair, 1 thread", f("%.0f ns", poolNs), f("cuMemAlloc+cuMemFree %.1f µs; cuMemAllocFromPoolAsync+cuMemFreeAsync %.2f µs",
                driver / 1e3, async / 1e3), f("%.4f / %.3f (goal ≤ 0.5 µs: %s)", poolNs / driver, poolNs / async,
                        poolNs <= 500 ? "met" : "missed"));
        row("1 MiB alloc + free pair, 8 threads (per pair, wall / pairs)", f("%.0f ns", pool8), "", "");
    }

    // ------------------------------------------------------------------ 3. tiny tasks

    private void tinyTasks() {
        int tasks = 10_000;
        GpuBackend gpu = new GpuBackend(api, device, GpuSettings.defaults(1L << 30), false);
        DeviceBuffer target = gpu.memory().allocate(4 * 32);
        try (Scheduler s = Scheduler.builder().threads(2).policy(new GpuFirstPolicy()).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("tiny");
            g.group("tiny", tasks, (i, t) -> t.gpu(ctx -> {
                ctx.unwrap(GpuContext.class).kernels().fill(1, i, target);
                return null;
            }));
            double best = Double.MAX_VALUE;
            for (int round = 0; round < (quick ? 3 : 6); round++) {
                long t0 = System.nanoTime();
                s.execute(g);
                best = Math.min(best, (double) (System.nanoTime() - t0) / tasks);
            }
            // the raw loop: the same kernel launched 10,000 times on one stream, then one synchronize
            api.makeCurrent(device.ordinal());
            CUmodule module = new CUmodule();
            JCudaDriver.cuModuleLoadData(module, KernelCache.builtinPtx());
            CUfunction fill = new CUfunction();
            JCudaDriver.cuModuleGetFunction(fill, module, "hts_fill_f32");
            CUstream stream = new CUstream();
            JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
            double raw = Double.MAX_VALUE;
            for (int round = 0; round < 3; round++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < tasks; i++) {
                    Pointer params = Pointer.to(Pointer.to(new long[] {1}), Pointer.to(new float[] {i}),
                            Pointer.to(JCudaApi.pointer(target.address())));
                    JCudaDriver.cuLaunchKernel(fill, 1, 1, 1, 256, 1, 1, 0, stream, params, null);
                }
                JCudaDriver.cuStreamSynchronize(stream);
                raw = Math.min(raw, (double) (System.nanoTime() - t0) / tasks);
            }
            JCudaDriver.cuStreamDestroy(stream);
            row("10,000 tiny GPU tasks (one 1-element kernel each) through the scheduler, per task",
                    f("%.1f µs (%.0f tasks/s)", best / 1e3, 1e9 / best), f("raw launch loop %.1f µs a launch", raw / 1e3),
                    f("+%.1f µs a task", (best - raw) / 1e3));
        }
        target.close();
    }

    // ------------------------------------------------------------------ 4. GEMM

    private void gemm() {
        int n = 8192;
        GpuBackend gpu = new GpuBackend(api, device, GpuSettings.defaults(8L << 30), true);
        long t0park = System.nanoTime();
        java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        row("host timer: parkNanos(20 µs) slept / the launcher's spin lead", f("%.0f µs / %.0f µs",
                (System.nanoTime() - t0park) / 1e3, gpu.spinLead().toNanos() / 1e3), "", "");
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
        try (Scheduler s = Scheduler.builder().threads(2).policy(new GpuFirstPolicy()).gpuBackend(gpu).build()) {
            for (Blas.Precision p : new Blas.Precision[] {Blas.Precision.FP32, Blas.Precision.TF32, Blas.Precision.BF16}) {
                for (DeviceBuffer m : new DeviceBuffer[] {a, b}) {
                    host.clear();
                    if (p.elementBytes() == 4) {
                        while (host.remaining() >= 4) {
                            host.putFloat(r.nextFloat() - 0.5f);
                        }
                    }
                    else {
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
                        directGemm(handle, p, n, a, b, c);
                    }
                    JCublas2.cublasSetStream(handle, new cudaStream_t(stream));
                    return null;
                });
                TaskGraph one = TaskGraph.named("gemm-one-" + p);
                one.task("gemm-one-" + p).gpu(ctx -> {
                    ctx.unwrap(GpuContext.class).blas().gemm(p, n, n, n, 1f, a, b, 0f, c);
                    return null;
                });
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
                    io.hts.engine.run.GraphRun run = null;
                    long t0;
                    double d = Double.NaN;
                    try {
                        for (boolean htsNow : new boolean[] {htsFirst, !htsFirst}) {
                            t0 = System.nanoTime();
                            if (htsNow) {
                                run = s.execute(g);
                                h = (double) (System.nanoTime() - t0) / chain;
                            }
                            else {
                                for (int i = 0; i < chain; i++) {
                                    directGemm(handle, p, n, a, b, c);
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
                                    gaps += tasks.get(i).startNanos() - tasks.get(i - 1).endNanos();
                                }
                            }
                            row(f("diagnosis %s chain: per task, launch to completion seen / gap to the next launch", p),
                                    f("%.3f ms / %.1f µs", busy / tasks.size() / 1e6, gaps / Math.max(1, tasks.size() - 1) / 1e3),
                                    f("direct %.3f ms", d / 1e6), "");
                            polledDirect(handle, stream, p, n, a, b, c, chain, d);
                            long f0 = System.nanoTime();
                            s.execute(foreign);
                            double foreignHandle = (double) (System.nanoTime() - f0) / chain;
                            long b0 = System.nanoTime();
                            s.execute(batch);
                            double batched = (double) (System.nanoTime() - b0) / chain;
                            row(f("diagnosis %s: one HTS task enqueuing all %d GEMMs through the benchmark's own handle"
                                    + " on the task's stream", p, chain), f("%.3f ms a GEMM", foreignHandle / 1e6),
                                    f("backend's handle %.3f ms", batched / 1e6), "");
                            long d0 = System.nanoTime();
                            for (int i = 0; i < chain; i++) {
                                directGemm(handle, p, n, a, b, c);
                            }
                            double directHost = (double) (System.nanoTime() - d0) / chain;
                            JCudaDriver.cuStreamSynchronize(stream);
                            io.hts.gpu.stream.StreamLease lane = gpu.streams().tryAcquire(); // idle between runs
                            if (lane != null) {
                                JCublas2.cublasSetStream(handle, new cudaStream_t(JCudaApi.handle(lane.stream())));
                                long l0 = System.nanoTime();
                                for (int i = 0; i < chain; i++) {
                                    directGemm(handle, p, n, a, b, c);
                                }
                                api.synchronize(lane.stream());
                                double onLane = (double) (System.nanoTime() - l0) / chain;
                                JCublas2.cublasSetStream(handle, new cudaStream_t(stream));
                                gpu.streams().release(lane);
                                row(f("diagnosis %s: the direct loop from the benchmark's thread on the backend's lane-%d stream",
                                        p, lane.lane()), f("%.3f ms a GEMM", onLane / 1e6), f("own stream %.3f ms", d / 1e6), "");
                            }
                            row(f("diagnosis %s: one HTS task enqueuing all %d GEMMs / host time of one GEMM call in it"
                                    + " / host time of one direct call", p, chain), f("%.3f ms a GEMM / %.1f µs", batched / 1e6,
                                    hostNanos[0] / 1e3 / chain), f("%.1f µs", directHost / 1e3), "");
                        }
                        t0 = System.nanoTime();
                        for (int i = 0; i < 5; i++) {
                            s.execute(one);
                        }
                        o = (double) (System.nanoTime() - t0) / 5;
                    }
                    catch (RuntimeException ex) {
                        row(f("GEMM %d² %s", n, p), "failed: " + ex.getMessage(), "", "");
                        failed = true;
                        break;
                    }
                    t0 = System.nanoTime();
                    for (int i = 0; i < 5; i++) {
                        directGemm(handle, p, n, a, b, c);
                        JCudaDriver.cuStreamSynchronize(stream);
                    }
                    double ds = (double) (System.nanoTime() - t0) / 5;
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
                row(f("diagnosis %s order: HTS chain run first / second in a round; direct loop first / second", p),
                        f("%.3f / %.3f ms", htsBy[0] / 1e6, htsBy[1] / 1e6), f("%.3f / %.3f ms", directBy[0] / 1e6,
                                directBy[1] / 1e6),
                        f("HTS first vs direct first %+.2f %%; HTS second vs direct second %+.2f %%",
                                100 * (htsBy[0] / directBy[0] - 1), 100 * (htsBy[1] / directBy[1] - 1)));
                if (p != Blas.Precision.FP32) {
                    timedChain(s, p, n, a, b, c);
                }
                double spinning = Double.MAX_VALUE;
                GpuBackend spinner = new GpuBackend(api, device, GpuSettings.defaults(1L << 30).withSpinWhileBusy(true), true);
                try (Scheduler spin = Scheduler.builder().threads(2).policy(new GpuFirstPolicy()).gpuBackend(spinner).build()) {
                    for (int round = 0; round < 3; round++) {
                        long t0 = System.nanoTime();
                        spin.execute(g);
                        if (round > 0) {
                            spinning = Math.min(spinning, (double) (System.nanoTime() - t0) / chain);
                        }
                    }
                }
                row(f("GEMM %d² %s, the same chain with the launcher spinning while work is in flight (spinWhileBusy)", n, p),
                        f("%.3f ms a GEMM", spinning / 1e6), f("%.3f ms", direct / 1e6),
                        f("%+.2f %% (goal ≤ 2 %%: %s)", 100 * (spinning / direct - 1), spinning / direct - 1 <= 0.02 ? "met" : "missed"));
                double flops = Blas.gemmFlops(n, n, n);
                row(f("GEMM %d² %s, a chain of %d dependent HTS GPU tasks vs the same %d cuBLAS calls on one stream",
                        n, p, chain, chain),
                        f("%.3f ms a GEMM, %.0f TFLOP/s", hts / 1e6, flops / hts / 1e3),
                        f("%.3f ms, %.0f TFLOP/s", direct / 1e6, flops / direct / 1e3),
                        f("%+.2f %% (goal ≤ 2 %%: %s)", 100 * (hts / direct - 1), hts / direct - 1 <= 0.02 ? "met" : "missed"));
                row(f("GEMM %d² %s, one task run by a waiting caller (scheduler.execute) vs one call + synchronize", n, p),
                        f("%.3f ms", single / 1e6), f("%.3f ms", directSingle / 1e6),
                        f("%+.0f µs a run", (single - directSingle) / 1e3));
            }
        }
        JCublas2.cublasDestroy(handle);
        JCudaDriver.cuStreamDestroy(stream);
    }

    // ------------------------------------------------------------------ 5. GEMM with inputs on the host

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
            row("GEMM with inputs on the host", "cuBLAS unavailable: " + gpu.cublasProblem().get(), "", "");
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
        try (Scheduler s = Scheduler.builder().threads(2).policy(new GpuFirstPolicy()).gpuBackend(gpu).build()) {
            for (Blas.Precision p : new Blas.Precision[] {Blas.Precision.FP32, Blas.Precision.TF32, Blas.Precision.BF16}) {
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
                    directGemm(handles[0], p, n, n, n, db.address(), da.address(), dc.address());
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
                }
                catch (RuntimeException ex) {
                    row(f("GEMM %d² %s with inputs on the host", n, p), "failed: " + ex, "", "");
                    continue;
                }
                row(f("GEMM %d² %s with A, B, C in pinned host memory: measured parts", n, p),
                        f("copy in %.2f ms a matrix (%.1f GB/s), GEMM %.2f ms, copy out %.2f ms (%.1f GB/s)", up / 1e6,
                                bytes / up, compute / 1e6, down / 1e6, bytes / down),
                        f("ideal (2 copies in + GEMM + copy out) %.2f ms", ideal / 1e6), check);
                row(f("GEMM %d² %s with inputs on the host, TiledGemm (%d bands) vs the ideal", n, p, bands),
                        f("%.2f ms", hts / 1e6), f("%.2f ms", ideal / 1e6),
                        f("%+.1f %% (goal ≤ 5 %% beyond ideal: %s)", 100 * (hts / ideal - 1), hts / ideal - 1 <= 0.05
                                ? "met" : "missed"));
                row(f("GEMM %d² %s with inputs on the host, TiledGemm vs the same %d bands by hand on 4 streams", n, p, bands),
                        f("%.2f ms", hts / 1e6), f("%.2f ms", byHand / 1e6), f("%+.1f %%", 100 * (hts / byHand - 1)));
                row(f("GEMM %d² %s with inputs on the host, TiledGemm in one band (no overlap) vs the ideal", n, p),
                        f("%.2f ms", oneBand / 1e6), f("%.2f ms", ideal / 1e6), f("%+.1f %%", 100 * (oneBand / ideal - 1)));
                // with a stream for every band and B's upload, no band waits for a stream to free up
                GpuBackend wideGpu = new GpuBackend(api, device, GpuSettings.defaults(8L << 30).withStreams(bands + 2), true);
                double wide = Double.MAX_VALUE;
                try (Scheduler ws = Scheduler.builder().threads(2).policy(new GpuFirstPolicy()).gpuBackend(wideGpu).build()) {
                    for (int round = 0; round < 4; round++) {
                        double w = timed(() -> ws.execute(tiled));
                        if (round > 0) {
                            wide = Math.min(wide, w);
                        }
                    }
                }
                row(f("GEMM %d² %s with inputs on the host, TiledGemm on a backend of %d streams vs the same bands by hand",
                        n, p, bands + 2), f("%.2f ms", wide / 1e6), f("%.2f ms", byHand / 1e6),
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

    static double timed(Runnable work) {
        long t0 = System.nanoTime();
        work.run();
        return System.nanoTime() - t0;
    }

    /** The bands written by hand: B on stream 0, band i on stream i % 4 after B's event. */
    private static void bandsByHand(Blas.Precision p, int n, int bands, ByteBuffer a, ByteBuffer b, ByteBuffer c,
            DeviceBuffer da, DeviceBuffer db, DeviceBuffer dc, CUstream[] streams, cublasHandle[] handles, CUevent bReady) {
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
            JCudaDriver.cuMemcpyHtoDAsync(JCudaApi.pointer(da.address() + offA), Pointer.to(a.slice((int) offA, (int) lenA)),
                    lenA, st);
            directGemm(handles[i % handles.length], p, n, rows, n, db.address(), da.address() + offA, dc.address() + offA);
            JCudaDriver.cuMemcpyDtoHAsync(Pointer.to(c.slice((int) offA, (int) lenA)), JCudaApi.pointer(dc.address() + offA),
                    lenA, st);
        }
        for (CUstream st : streams) {
            JCudaDriver.cuStreamSynchronize(st);
        }
    }

    static void fillRandom(ByteBuffer host, Blas.Precision p, long seed) {
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        int count = host.capacity() / p.elementBytes();
        for (int i = 0; i < count; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            float v = (x >>> 40) * 0x1p-24f - 0.5f;
            if (p.elementBytes() == 4) {
                host.putFloat(4 * i, v);
            }
            else {
                host.putShort(2 * i, (short) (Float.floatToRawIntBits(v) >>> 16));
            }
        }
    }

    /** A few entries of row-major C against dot products on the CPU: the benchmark measured a real product. */
    static String checkProduct(Blas.Precision p, int n, ByteBuffer a, ByteBuffer b, ByteBuffer c) {
        double worst = 0;
        for (int row : new int[] {0, n / 2 + 1, n - 1}) {
            for (int col : new int[] {0, 777, n - 1}) {
                double acc = 0;
                for (int i = 0; i < n; i++) {
                    acc += (double) element(a, p, (long) row * n + i) * element(b, p, (long) i * n + col);
                }
                double got = element(c, p, (long) row * n + col);
                worst = Math.max(worst, Math.abs(got - acc) / (1 + Math.abs(acc)));
            }
        }
        double tolerance = p == Blas.Precision.FP32 ? 1e-3 : 5e-2;
        return f("C checked at 9 entries: worst relative error %.1e (%s)", worst, worst <= tolerance ? "ok" : "WRONG");
    }

    private static float element(ByteBuffer m, Blas.Precision p, long index) {
        return p.elementBytes() == 4 ? m.getFloat((int) (4 * index))
                : Float.intBitsToFloat(m.getShort((int) (2 * index)) << 16);
    }

    /** The status of cublasGemmEx for each type and compute type on a small problem. */
    private void gemmExProbe() {
        api.makeCurrent(device.ordinal());
        cublasHandle h = new cublasHandle();
        JCublas2.cublasCreate(h);
        CUdeviceptr m = new CUdeviceptr();
        JCudaDriver.cuMemAlloc(m, 3L * 4 * 64 * 64);
        int[][] cases = {{cudaDataType.CUDA_R_32F, cublasComputeType.CUBLAS_COMPUTE_32F},
            {cudaDataType.CUDA_R_32F, cublasComputeType.CUBLAS_COMPUTE_32F_FAST_TF32},
            {cudaDataType.CUDA_R_16BF, cublasComputeType.CUBLAS_COMPUTE_32F},
            {cudaDataType.CUDA_R_16F, cublasComputeType.CUBLAS_COMPUTE_32F},
            {cudaDataType.CUDA_R_16F, cublasComputeType.CUBLAS_COMPUTE_16F}};
        StringBuilder sb = new StringBuilder();
        for (int[] c : cases) {
            int status = JCublas2.cublasGemmEx(h, 0, 0, 64, 64, 64, Pointer.to(new float[] {1f}), m, c[0], 64,
                    m.withByteOffset(4 * 64 * 64), c[0], 64, Pointer.to(new float[] {0f}),
                    m.withByteOffset(8 * 64 * 64), c[0], 64, c[1], cublasGemmAlgo.CUBLAS_GEMM_DEFAULT);
            sb.append(f("GemmEx type %d compute %d: %s; ", c[0], c[1], jcuda.jcublas.cublasStatus.stringFor(status)));
        }
        for (int type : new int[] {cudaDataType.CUDA_R_16BF, cudaDataType.CUDA_R_16F}) {
            int status = JCublas2.cublasSgemmEx(h, 0, 0, 64, 64, 64, Pointer.to(new float[] {1f}), m, type, 64,
                    m.withByteOffset(4 * 64 * 64), type, 64, Pointer.to(new float[] {0f}),
                    m.withByteOffset(8 * 64 * 64), type, 64);
            sb.append(f("SgemmEx type %d: %s; ", type, jcuda.jcublas.cublasStatus.stringFor(status)));
        }
        JCudaDriver.cuCtxSynchronize();
        JCudaDriver.cuMemFree(m);
        JCublas2.cublasDestroy(h);
        row("cublasGemmEx probe (64³)", sb.toString(), "", "");
    }

    /**
     * A chain of GEMM tasks whose bodies bracket their GEMM with timing events: the GEMM's device
     * time, against the task's launch-to-completion time in the profile, tells a slow kernel from
     * a late completion.
     */
    private void timedChain(Scheduler s, Blas.Precision p, int n, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c) {
        int chain = 20;
        CUevent[][] events = new CUevent[chain][2];
        long[] bodyStart = new long[chain];
        long[] bodyEnd = new long[chain];
        TaskGraph g = TaskGraph.named("gemm-timed-" + p);
        io.hts.engine.graph.Task<?> previous = null;
        for (int i = 0; i < chain; i++) {
            int k = i;
            events[i][0] = new CUevent();
            events[i][1] = new CUevent();
            JCudaDriver.cuEventCreate(events[i][0], 0);
            JCudaDriver.cuEventCreate(events[i][1], 0);
            io.hts.engine.graph.TaskBuilder t = g.task("timed" + i);
            if (previous != null) {
                t.after(previous);
            }
            previous = t.gpu(ctx -> {
                GpuContext gc = ctx.unwrap(GpuContext.class);
                bodyStart[k] = System.nanoTime();
                CUstream st = JCudaApi.handle(gc.stream());
                JCudaDriver.cuEventRecord(events[k][0], st);
                gc.blas().gemm(p, n, n, n, 1f, a, b, 0f, c);
                JCudaDriver.cuEventRecord(events[k][1], st);
                bodyEnd[k] = System.nanoTime();
                return null;
            });
        }
        io.hts.engine.run.GraphRun run = s.execute(g);
        var tasks = run.profile().tasks();
        double gpu = 0;
        double seen = 0;
        double body = 0;
        float[] ms = new float[1];
        for (int i = 1; i < chain; i++) { // the first one warms up
            JCudaDriver.cuEventElapsedTime(ms, events[i][0], events[i][1]);
            gpu += ms[0] * 1e6;
            seen += tasks.get(i).durationNanos();
            body += bodyEnd[i] - bodyStart[i];
        }
        int m = chain - 1;
        row(f("diagnosis %s chain: GEMM device time (events) / body host time / launch to completion seen", p),
                f("%.3f ms / %.1f µs / %.3f ms", gpu / m / 1e6, body / m / 1e3, seen / m / 1e6), "", "");
        for (CUevent[] pair : events) {
            JCudaDriver.cuEventDestroy(pair[0]);
            JCudaDriver.cuEventDestroy(pair[1]);
        }
    }

    /** The direct chain again while another thread polls an event without pause, as HTS's launcher may. */
    private void polledDirect(cublasHandle handle, CUstream stream, Blas.Precision p, int n, DeviceBuffer a,
            DeviceBuffer b, DeviceBuffer c, int chain, double unpolled) {
        CUevent e = new CUevent();
        JCudaDriver.cuEventCreate(e, CUevent_flags.CU_EVENT_DISABLE_TIMING);
        CUstream other = new CUstream();
        JCudaDriver.cuStreamCreate(other, CUstream_flags.CU_STREAM_NON_BLOCKING);
        JCudaDriver.cuEventRecord(e, other);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        long[] queries = new long[1];
        Thread poller = new Thread(() -> {
            api.makeCurrent(device.ordinal());
            while (!stop.get()) {
                JCudaDriver.cuEventQuery(e);
                queries[0]++;
            }
        });
        poller.start();
        long t0 = System.nanoTime();
        for (int i = 0; i < chain; i++) {
            directGemm(handle, p, n, a, b, c);
        }
        JCudaDriver.cuStreamSynchronize(stream);
        double polled = (double) (System.nanoTime() - t0) / chain;
        stop.set(true);
        try {
            poller.join();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        row(f("diagnosis %s: direct chain while another thread polls cuEventQuery", p), f("%.3f ms (%.0f queries)", polled / 1e6,
                (double) queries[0]), f("%.3f ms unpolled", unpolled / 1e6), f("%+.2f %%", 100 * (polled / unpolled - 1)));
        JCudaDriver.cuEventDestroy(e);
        JCudaDriver.cuStreamDestroy(other);
    }

    private static void directGemm(cublasHandle h, Blas.Precision p, int n, DeviceBuffer a, DeviceBuffer b,
            DeviceBuffer c) {
        directGemm(h, p, n, n, n, a.address(), b.address(), c.address());
    }

    /** Column-major {@code C = A B} (m x k times k x n) straight through JCublas. */
    private static void directGemm(cublasHandle h, Blas.Precision p, int m, int n, int k, long a, long b, long c) {
        Pointer one = Pointer.to(new float[] {1f});
        Pointer zero = Pointer.to(new float[] {0f});
        int op = cublasOperation.CUBLAS_OP_N;
        CUdeviceptr pa = JCudaApi.pointer(a);
        CUdeviceptr pb = JCudaApi.pointer(b);
        CUdeviceptr pc = JCudaApi.pointer(c);
        switch (p) {
            case FP32 -> {
                JCublas2.cublasSetMathMode(h, cublasMath.CUBLAS_DEFAULT_MATH);
                JCublas2.cublasSgemm(h, op, op, m, n, k, one, pa, m, pb, k, zero, pc, m);
            }
            case TF32 -> {
                JCublas2.cublasSetMathMode(h, cublasMath.CUBLAS_TF32_TENSOR_OP_MATH);
                JCublas2.cublasSgemm(h, op, op, m, n, k, one, pa, m, pb, k, zero, pc, m);
            }
            default -> {
                JCublas2.cublasSetMathMode(h, cublasMath.CUBLAS_DEFAULT_MATH);
                JCublas2.cublasSgemmEx(h, op, op, m, n, k, one, pa, cudaDataType.CUDA_R_16BF, m, pb,
                        cudaDataType.CUDA_R_16BF, k, zero, pc, cudaDataType.CUDA_R_16BF, m);
            }
        }
    }

}
