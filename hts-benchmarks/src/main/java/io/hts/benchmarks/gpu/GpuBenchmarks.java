package io.hts.benchmarks.gpu;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.Scheduler;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import jcuda.Pointer;
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
        GpuBenchmarks b =
                new GpuBenchmarks(found.api(), found.devices().get(0), args.length > 0 && args[0].equals("quick"));
        b.rows.add("| what | HTS | baseline | ratio / overhead |");
        b.rows.add("|---|---|---|---|");
        b.completionMechanisms();
        b.memoryPool();
        b.tinyTasks();
        new GemmBenchmarks(b.api, b.device, b.quick, b::row).runAll();
        new GpuLatencyBenchmarks(b.api, b.device, b.quick ? 200 : 1000, b::row).run();
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
                row(
                        "completion seen by the host: event record + cuEventQuery polling (HTS's choice)",
                        f("%.1f µs", poll / 1e3),
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
        DeviceMemoryPool pool =
                new DeviceMemoryPool(api, device.ordinal(), io.hts.gpu.memory.PoolSettings.of(256L << 20, 1L << 30));
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
        row(
                "1 MiB alloc + free pair, 1 thread",
                f("%.0f ns", poolNs),
                f(
                        "cuMemAlloc+cuMemFree %.1f µs; cuMemAllocFromPoolAsync+cuMemFreeAsync %.2f µs",
                        driver / 1e3, async / 1e3),
                f(
                        "%.4f / %.3f (goal ≤ 0.5 µs: %s)",
                        poolNs / driver, poolNs / async, poolNs <= 500 ? "met" : "missed"));
        row("1 MiB alloc + free pair, 8 threads (per pair, wall / pairs)", f("%.0f ns", pool8), "", "");
    }

    // ------------------------------------------------------------------ 3. tiny tasks

    private void tinyTasks() {
        int tasks = 10_000;
        GpuBackend gpu = new GpuBackend(api, device, GpuSettings.defaults(1L << 30), false);
        DeviceBuffer target = gpu.memory().allocate(4 * 32);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .build()) {
            TaskGraph g = TaskGraph.named("tiny");
            g.group(
                    "tiny",
                    tasks,
                    (i, t) -> t.gpu(ctx -> {
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
                    Pointer params = Pointer.to(
                            Pointer.to(new long[] {1}),
                            Pointer.to(new float[] {i}),
                            Pointer.to(JCudaApi.pointer(target.address())));
                    JCudaDriver.cuLaunchKernel(fill, 1, 1, 1, 256, 1, 1, 0, stream, params, null);
                }
                JCudaDriver.cuStreamSynchronize(stream);
                raw = Math.min(raw, (double) (System.nanoTime() - t0) / tasks);
            }
            JCudaDriver.cuStreamDestroy(stream);
            row(
                    "10,000 tiny GPU tasks (one 1-element kernel each) through the scheduler, per task",
                    f("%.1f µs (%.0f tasks/s)", best / 1e3, 1e9 / best),
                    f("raw launch loop %.1f µs a launch", raw / 1e3),
                    f("+%.1f µs a task", (best - raw) / 1e3));
        }
        target.close();
    }

    static double timed(Runnable work) {
        long t0 = System.nanoTime();
        work.run();
        return System.nanoTime() - t0;
    }
}
