package io.hts.sample;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Scenario 3, an operator benchmark suite: GEMM at three sizes and an AXPY, each a task with a CPU
 * body (plain Java loops) and a GPU body (cuBLAS, the built-in kernel), so the policy picks the
 * device and the run's profile shows how long each took there; a report task checksums the
 * results (the same on either device, to rounding).
 */
@Configuration(proxyBeanMethods = false)
public class OperatorBenchmark {

    static final int[] GEMM_SIZES = {128, 256, 384};
    static final int AXPY_LENGTH = 1 << 22;

    @Bean
    TaskGraph operators() {
        TaskGraph g = TaskGraph.named("operators");
        Map<String, Task<float[]>> ops = new LinkedHashMap<>();
        for (int n : GEMM_SIZES) {
            float[] a = matrix(n, 1);
            float[] b = matrix(n, 2);
            ops.put(
                    "gemm-" + n,
                    g.task("gemm-" + n)
                            .bodies(
                                    ctx -> gemmOnCpu(n, a, b),
                                    ctx -> gemmOnGpu(ctx.unwrap(GpuContext.class), n, a, b)));
        }
        float[] x = matrix(1 << 11, 3);
        ops.put("axpy", g.task("axpy").bodies(ctx -> axpyOnCpu(x), ctx -> axpyOnGpu(ctx.unwrap(GpuContext.class), x)));
        g.task("report").after(ops.values().toArray(Task[]::new)).cpu(ctx -> {
            Map<String, Double> checksums = new LinkedHashMap<>();
            ops.forEach((name, op) -> checksums.put(name, checksum(ctx.input(op))));
            return checksums;
        });
        return g;
    }

    /** n x n values in [-0.5, 0.5), the same for a seed on every run. */
    static float[] matrix(int n, int seed) {
        float[] m = new float[n * n];
        long s = seed * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < m.length; i++) {
            s = s * 6364136223846793005L + 1442695040888963407L;
            m[i] = (s >>> 40) * 0x1p-24f - 0.5f;
        }
        return m;
    }

    /** Column-major C = A B, as cuBLAS computes it. */
    static float[] gemmOnCpu(int n, float[] a, float[] b) {
        float[] c = new float[n * n];
        for (int col = 0; col < n; col++) {
            for (int k = 0; k < n; k++) {
                float bk = b[k + col * n];
                int ak = k * n;
                int cc = col * n;
                for (int row = 0; row < n; row++) {
                    c[cc + row] += a[ak + row] * bk;
                }
            }
        }
        return c;
    }

    static float[] gemmOnGpu(GpuContext gpu, int n, float[] a, float[] b) {
        DeviceBuffer da = gpu.upload(a);
        DeviceBuffer db = gpu.upload(b);
        DeviceBuffer dc = gpu.scratch((long) n * n * Float.BYTES);
        gpu.blas().gemm(Blas.Precision.FP32, n, n, n, 1f, da, db, 0f, dc);
        gpu.release(da);
        gpu.release(db);
        return gpu.download(dc, new float[n * n]); // filled when the task completes
    }

    /** y = 2 x + 1, for every x. */
    static float[] axpyOnCpu(float[] x) {
        float[] y = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = 2 * x[i] + 1;
        }
        return y;
    }

    static float[] axpyOnGpu(GpuContext gpu, float[] x) {
        DeviceBuffer dx = gpu.upload(x);
        DeviceBuffer dy = gpu.scratch((long) x.length * Float.BYTES);
        gpu.kernels().fill(x.length, 1f, dy);
        gpu.kernels().axpy(x.length, 2f, dx, dy);
        gpu.release(dx);
        return gpu.download(dy, new float[x.length]);
    }

    static double checksum(float[] values) {
        double sum = 0;
        for (int i = 0; i < values.length; i++) {
            sum += values[i] * (1 + (i % 7));
        }
        return sum;
    }
}
