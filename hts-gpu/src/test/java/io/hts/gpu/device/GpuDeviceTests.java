package io.hts.gpu.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.policy.CpuFirstPolicy;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.kernel.Kernel;
import io.hts.gpu.kernel.KernelCache;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.memory.DeviceMemoryPool;
import io.hts.gpu.memory.MemoryStatistics;
import io.hts.gpu.memory.PinnedStagingPool;
import io.hts.gpu.parallel.TiledGemm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The GPU backend, memory pool, kernels, NVRTC and cuBLAS on a real CUDA device. */
@RequiresGpu
class GpuDeviceTests {

    private static CudaApi cuda;
    private static DeviceInfo device;
    private static GpuBackend backend;

    @BeforeAll
    static void start() {
        GpuDiscovery.Result found = GpuRequirement.gpu();
        cuda = found.api();
        device = found.devices().get(0);
        backend = new GpuBackend(cuda, device, GpuSettings.defaults(8L << 30), true);
    }

    @AfterAll
    static void stop() {
        if (backend != null) {
            backend.close();
        }
    }

    private static Scheduler scheduler(SchedulingPolicy policy) {
        return Scheduler.builder()
                .threads(2)
                .policy(policy)
                .gpuBackend(new Unclosed(backend))
                .build();
    }

    private static float[] random(int n, long seed) {
        Random r = new Random(seed);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = r.nextFloat() * 2 - 1;
        }
        return v;
    }

    @Test
    void discoveryFindsTheDevice() {
        assertThat(device.totalMemory()).isGreaterThan(1L << 30);
        assertThat(device.computeMajor()).isGreaterThanOrEqualTo(7);
        assertThat(backend.name()).startsWith("cuda:0 ");
        assertThat(backend.cublasProblem())
                .as("cuBLAS loads through the kit's retargeted natives")
                .isEmpty();
        System.out.println(
                "GPU under test: " + device + ", " + GpuRequirement.gpu().describe());
    }

    /** The documented entry point (docs/gpu.md): discovery, a backend on the first device, a task on it. */
    @Test
    void startOnFirstDeviceGivesABackendThatRunsATask() {
        GpuBackend first = GpuBackend.startOnFirstDevice(total -> GpuSettings.defaults(1L << 30))
                .orElseThrow();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(first)
                .build()) {
            assertThat(first.deviceInfo().ordinal()).isZero();
            float[] x = random(1 << 16, 9);
            double expected = 0;
            for (float v : x) {
                expected += v;
            }
            TaskGraph g = TaskGraph.named("first-device");
            Task<float[]> sum = g.task("sum").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer dx = c.upload(x);
                DeviceBuffer out = c.scratch(4);
                c.kernels().sum(x.length, dx, out);
                c.release(dx);
                return c.download(out, new float[1]);
            });
            GraphRun run = s.execute(g);
            assertThat(run.profile().tasks().get(0).device()).isEqualTo(Device.GPU);
            assertThat((double) run.result(sum)[0]).isCloseTo(expected, within(0.01 + 1e-4 * Math.abs(expected)));
        }
    }

    /** The seed's dual-bodied task: same result from the CPU body and the GPU body (AXPY + sum). */
    @Test
    void dualBodiedTasksGiveTheSameResultOnCpuAndGpu() {
        int n = 1 << 20;
        float[] x = random(n, 1);
        float[] y = random(n, 2);
        double[] sums = new double[2];
        int k = 0;
        for (SchedulingPolicy policy : new SchedulingPolicy[] {new GpuFirstPolicy(), new CpuFirstPolicy()}) {
            try (Scheduler s = scheduler(policy)) {
                TaskGraph g = TaskGraph.named("axpy-sum");
                TaskGroup<float[]> parts = g.group(
                        "axpy",
                        4,
                        (i, t) -> t.bodies(
                                ctx -> {
                                    float[] out = new float[n];
                                    for (int j = 0; j < n; j++) {
                                        out[j] = 0.5f * x[j] + y[j];
                                    }
                                    return out;
                                },
                                ctx -> {
                                    GpuContext c = ctx.unwrap(GpuContext.class);
                                    DeviceBuffer dx = c.upload(x);
                                    DeviceBuffer dy = c.upload(y);
                                    c.kernels().axpy(n, 0.5f, dx, dy);
                                    float[] out = c.download(dy, new float[n]);
                                    c.release(dx);
                                    c.release(dy);
                                    return out;
                                }));
                Task<Double> total = g.task("total").after(parts).cpu(ctx -> {
                    double sum = 0;
                    for (float[] p : ctx.inputs(parts)) {
                        for (float v : p) {
                            sum += v;
                        }
                    }
                    return sum;
                });
                GraphRun run = s.execute(g);
                sums[k++] = run.result(total);
                Device expected = policy instanceof GpuFirstPolicy ? Device.GPU : Device.CPU;
                assertThat(run.profile().tasks().get(0).device()).isEqualTo(expected);
                float[] first = run.results(parts).get(0);
                for (int j = 0; j < n; j += 997) {
                    assertThat(first[j]).isCloseTo(0.5f * x[j] + y[j], within(1e-6f));
                }
            }
        }
        assertThat(sums[0]).isCloseTo(sums[1], within(1e-6 * Math.abs(sums[1]) + 1e-3));
    }

    @Test
    void theSumKernelAgreesWithTheCpu() {
        int n = 3_000_001;
        float[] x = random(n, 3);
        double expected = 0;
        for (float v : x) {
            expected += v;
        }
        try (Scheduler s = scheduler(new GpuFirstPolicy())) {
            TaskGraph g = TaskGraph.named("sum");
            Task<float[]> sum = g.task("sum").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer dx = c.upload(x);
                DeviceBuffer out = c.scratch(4);
                c.kernels().sum(n, dx, out);
                c.release(dx);
                return c.download(out, new float[1]);
            });
            assertThat((double) s.execute(g).result(sum)[0])
                    .isCloseTo(expected, within(0.05 + 1e-4 * Math.abs(expected)));
        }
    }

    @Test
    void aKernelCompiledByNvrtcRuns() {
        String source = "extern \"C\" __global__ void twice_plus_one(long long n, float* x) {"
                + " long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; if (i < n) x[i] = 2 * x[i] + 1; }";
        try (Scheduler s = scheduler(new GpuFirstPolicy())) {
            TaskGraph g = TaskGraph.named("nvrtc");
            Task<float[]> t = g.task("t").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                DeviceBuffer b = c.upload(new float[] {0, 1, 2, 3});
                c.launch(
                        c.compile(source, "twice_plus_one"),
                        io.hts.gpu.cuda.Dim3.of(1),
                        io.hts.gpu.cuda.Dim3.of(32),
                        io.hts.gpu.cuda.KernelArguments.of().i64(4).pointer(b.address()));
                float[] out = c.download(b, new float[4]);
                c.release(b);
                return out;
            });
            assertThat(s.execute(g).result(t)).containsExactly(1, 3, 5, 7);
        }
    }

    /** GEMM in FP32, TF32 and BF16 against a CPU reference (tolerances per precision). */
    @Test
    void gemmInEachPrecisionMatchesTheCpu() {
        int m = 256;
        int n = 192;
        int k = 320;
        float[] a = random(m * k, 4);
        float[] b = random(k * n, 5);
        double[] reference = new double[m * n];
        for (int col = 0; col < n; col++) {
            for (int row = 0; row < m; row++) {
                double acc = 0;
                for (int i = 0; i < k; i++) {
                    acc += (double) a[i * m + row] * b[col * k + i];
                }
                reference[col * m + row] = acc;
            }
        }
        double[] tolerance = {1e-4, 2e-2, 1e-1, 5e-2};
        try (Scheduler s = scheduler(new GpuFirstPolicy())) {
            for (Blas.Precision p : new Blas.Precision[] {
                Blas.Precision.FP32, Blas.Precision.TF32, Blas.Precision.BF16, Blas.Precision.FP16
            }) {
                TaskGraph g = TaskGraph.named("gemm-" + p);
                Task<float[]> t = g.task("gemm").gpu(ctx -> {
                    GpuContext c = ctx.unwrap(GpuContext.class);
                    DeviceBuffer da = upload(c, a, p);
                    DeviceBuffer db = upload(c, b, p);
                    DeviceBuffer dc = c.scratch((long) m * n * p.elementBytes());
                    c.blas().gemm(p, m, n, k, 1f, da, db, 0f, dc);
                    c.release(da);
                    c.release(db);
                    return download(c, dc, m * n, p);
                });
                float[] result = s.execute(g).result(t);
                for (int i = 0; i < result.length; i += 7) {
                    assertThat((double) result[i])
                            .as("%s C[%d]", p, i)
                            .isCloseTo(reference[i], within(tolerance[p.ordinal()] * (1 + Math.abs(reference[i]))));
                }
            }
        }
    }

    /** Row-major host matrices in uneven bands of rows, FP32 and BF16, in pinned memory and in pageable memory. */
    @Test
    void aTiledHostGemmMatchesTheCpu() {
        int m = 301;
        int n = 130;
        int k = 70;
        float[] a = random(m * k, 14);
        float[] b = random(k * n, 15);
        double[] reference = rowMajorProduct(a, b, m, n, k);
        try (Scheduler s = scheduler(new GpuFirstPolicy())) {
            for (Blas.Precision p : new Blas.Precision[] {Blas.Precision.FP32, Blas.Precision.BF16}) {
                for (boolean pinned : new boolean[] {true, false}) {
                    int e = p.elementBytes();
                    PinnedStagingPool.Staging[] held = new PinnedStagingPool.Staging[3];
                    ByteBuffer[] host = new ByteBuffer[3];
                    int[] sizes = {m * k, k * n, m * n};
                    for (int i = 0; i < 3; i++) {
                        if (pinned) {
                            held[i] = backend.pinnedStaging().acquire((long) sizes[i] * e);
                            host[i] = held[i].buffer();
                        } else {
                            host[i] = ByteBuffer.allocateDirect(sizes[i] * e).order(ByteOrder.nativeOrder());
                        }
                    }
                    put(host[0], a, p);
                    put(host[1], b, p);
                    TaskGraph g = TaskGraph.named("tiled-" + p);
                    TaskGroup<Void> bands =
                            TiledGemm.of(p, m, n, k).tiles(7).addTo(g, "gemm", host[0], host[1], host[2]);
                    Task<float[]> read = g.task("read").after(bands).cpu(ctx -> get(host[2], m * n, p));
                    float[] c = s.execute(g).result(read);
                    double tolerance = p == Blas.Precision.FP32 ? 1e-4 : 1e-1;
                    for (int i = 0; i < c.length; i += 3) {
                        assertThat((double) c[i])
                                .as("%s pinned=%s C[%d][%d]", p, pinned, i / n, i % n)
                                .isCloseTo(reference[i], within(tolerance * (1 + Math.abs(reference[i]))));
                    }
                    for (PinnedStagingPool.Staging h : held) {
                        if (h != null) {
                            backend.pinnedStaging().release(h);
                        }
                    }
                }
            }
        }
        assertThat(backend.memory().statistics().used())
                .as("bands and B returned to the pool")
                .isZero();
    }

    /** The data-parallel split over every GPU here (one on the H200 machine: the split's single-device path). */
    @Test
    void aGemmSplitOverEveryGpuMatchesTheCpu() {
        int m = 257;
        int n = 96;
        int k = 64;
        float[] a = random(m * k, 24);
        float[] b = random(k * n, 25);
        double[] reference = rowMajorProduct(a, b, m, n, k);
        MultiGpuBackend gpus = MultiGpuBackend.startOnAllDevices(total -> GpuSettings.defaults(2L << 30))
                .orElseThrow();
        int[] all =
                gpus.devices().stream().mapToInt(g -> g.deviceInfo().ordinal()).toArray();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpus)
                .build()) {
            ByteBuffer[] host = new ByteBuffer[3];
            int[] sizes = {m * k, k * n, m * n};
            for (int i = 0; i < 3; i++) {
                host[i] = ByteBuffer.allocateDirect(sizes[i] * 4).order(ByteOrder.nativeOrder());
            }
            put(host[0], a, Blas.Precision.FP32);
            put(host[1], b, Blas.Precision.FP32);
            TaskGraph g = TaskGraph.named("split");
            TaskGroup<Void> bands = TiledGemm.of(Blas.Precision.FP32, m, n, k)
                    .devices(all)
                    .tiles(3)
                    .addTo(g, "gemm", host[0], host[1], host[2]);
            Task<float[]> read = g.task("read").after(bands).cpu(ctx -> get(host[2], m * n, Blas.Precision.FP32));
            float[] c = s.execute(g).result(read);
            for (int i = 0; i < c.length; i++) {
                assertThat((double) c[i])
                        .as("C[%d][%d]", i / n, i % n)
                        .isCloseTo(reference[i], within(1e-4 * (1 + Math.abs(reference[i]))));
            }
            assertThat(java.util.Arrays.stream(gpus.placements()).sum())
                    .as("B's uploads and the bands")
                    .isEqualTo(all.length * 4L);
        }
    }

    private static double[] rowMajorProduct(float[] a, float[] b, int m, int n, int k) {
        double[] reference = new double[m * n];
        for (int row = 0; row < m; row++) {
            for (int col = 0; col < n; col++) {
                double acc = 0;
                for (int i = 0; i < k; i++) {
                    acc += (double) a[row * k + i] * b[i * n + col];
                }
                reference[row * n + col] = acc;
            }
        }
        return reference;
    }

    private static void put(ByteBuffer host, float[] v, Blas.Precision p) {
        for (int i = 0; i < v.length; i++) {
            if (p.elementBytes() == 4) {
                host.putFloat(4 * i, v[i]);
            } else {
                host.putShort(2 * i, toBf16(v[i]));
            }
        }
    }

    private static float[] get(ByteBuffer host, int n, Blas.Precision p) {
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = p.elementBytes() == 4 ? host.getFloat(4 * i) : Float.intBitsToFloat(host.getShort(2 * i) << 16);
        }
        return out;
    }

    private static DeviceBuffer upload(GpuContext c, float[] v, Blas.Precision p) {
        if (p.elementBytes() == 4) {
            return c.upload(v);
        }
        ByteBuffer host = ByteBuffer.allocateDirect(v.length * 2).order(ByteOrder.nativeOrder());
        for (float f : v) {
            host.putShort(p == Blas.Precision.BF16 ? toBf16(f) : toHalf(f));
        }
        host.flip();
        DeviceBuffer d = c.allocate(host.remaining());
        c.upload(host, d);
        c.onDeviceDone(() -> host.clear()); // keeps the host buffer reachable until the copy is done
        return d;
    }

    private static float[] download(GpuContext c, DeviceBuffer d, int n, Blas.Precision p) {
        if (p.elementBytes() == 4) {
            return c.download(d, new float[n]);
        }
        float[] out = new float[n];
        float[] raw = c.download(d, new float[n / 2]);
        c.onDeviceDone(() -> {
            ByteBuffer bytes = ByteBuffer.allocate(n * 2).order(ByteOrder.nativeOrder());
            bytes.asFloatBuffer().put(raw);
            for (int i = 0; i < n; i++) {
                short h = bytes.getShort(2 * i);
                out[i] = p == Blas.Precision.BF16 ? Float.intBitsToFloat(h << 16) : fromHalf(h);
            }
        });
        return out;
    }

    /** IEEE half precision, round to nearest even; normal numbers and zero (the test's data). */
    static short toHalf(float f) {
        int bits = Float.floatToIntBits(f);
        int sign = (bits >>> 16) & 0x8000;
        int exp = ((bits >>> 23) & 0xff) - 127 + 15;
        int mantissa = bits & 0x7fffff;
        if (exp <= 0) {
            return (short) sign;
        }
        int half = sign | (exp << 10) | (mantissa >> 13);
        int rest = mantissa & 0x1fff;
        if (rest > 0x1000 || (rest == 0x1000 && (half & 1) == 1)) {
            half++;
        }
        return (short) half;
    }

    static float fromHalf(short h) {
        int sign = (h & 0x8000) << 16;
        int exp = (h >>> 10) & 0x1f;
        int mantissa = h & 0x3ff;
        if (exp == 0) {
            return Float.intBitsToFloat(sign) + (sign != 0 ? -1 : 1) * mantissa * 0x1p-24f;
        }
        return Float.intBitsToFloat(sign | ((exp - 15 + 127) << 23) | (mantissa << 13));
    }

    static short toBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    @Test
    void thePoolServesAllocationsFromItsArenasAndReportsStatistics() {
        DeviceMemoryPool pool = backend.memory();
        MemoryStatistics before = pool.statistics();
        DeviceBuffer[] buffers = new DeviceBuffer[64];
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = pool.allocate(1 << 20);
        }
        MemoryStatistics during = pool.statistics();
        assertThat(during.used() - before.used()).isEqualTo(64L << 20);
        for (DeviceBuffer b : buffers) {
            b.close();
        }
        assertThat(pool.statistics().used()).isEqualTo(before.used());
        assertThat(pool.statistics().capacity()).isGreaterThanOrEqualTo(256L << 20);
    }

    /**
     * Users' modules on the device: two texts of the same kernels (they differ by a comment) get
     * their own modules; with room for one, the first is evicted, unloaded by unloadEvicted()
     * ({@code cuModuleUnload}) and the second still computes; close() unloads the rest.
     */
    @Test
    void evictedKernelModulesAreUnloadedFromTheDevice() {
        String ptx = KernelCache.builtinPtx();
        KernelCache cache = new KernelCache(cuda, device, 1);
        Kernel second;
        try {
            Kernel first = cache.fromPtx(ptx, "hts_fill_f32");
            assertThat(fill(first, 3f)).containsOnly(3f);
            second = cache.fromPtx(ptx + "\n// a second module\n", "hts_fill_f32");
            assertThat(second).isNotSameAs(first);
            assertThat(cache.evictedModules()).isOne();
            assertThat(cache.unloadEvicted()).isOne();
            assertThat(first.isLoaded()).isFalse();
            assertThat(fill(second, 5f)).containsOnly(5f);
            assertThat(fill(cache.fromPtx(ptx, "hts_fill_f32"), 7f))
                    .as("loaded anew")
                    .containsOnly(7f);
            assertThat(cache.unloadEvicted()).isOne();
        } finally {
            cache.close();
        }
        assertThat(second.isLoaded()).isFalse();
    }

    /** Fills 1000 floats with the kernel on a stream of its own and copies them back. */
    private static float[] fill(Kernel fill, float value) {
        int n = 1000;
        cuda.makeCurrent(device.ordinal());
        CudaApi.Stream stream = cuda.createStream();
        long target = cuda.allocate(4L * n);
        try {
            cuda.launch(
                    fill.function(),
                    Dim3.of(4),
                    Dim3.of(256),
                    0,
                    stream,
                    KernelArguments.of().i64(n).f32(value).pointer(target));
            ByteBuffer host = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
            cuda.copyToHost(host, target, 4L * n, stream);
            cuda.synchronize(stream);
            float[] out = new float[n];
            host.asFloatBuffer().get(out);
            return out;
        } finally {
            cuda.free(target);
            cuda.destroyStream(stream);
        }
    }
}
