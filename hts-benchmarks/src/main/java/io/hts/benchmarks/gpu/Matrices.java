package io.hts.benchmarks.gpu;

import static io.hts.benchmarks.gpu.GpuBenchmarks.f;

import io.hts.gpu.blas.Blas;
import java.nio.ByteBuffer;

/** Random matrices for the GEMM benchmarks, and a check that a product measured is a real product. */
final class Matrices {

    private Matrices() {}

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
            } else {
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
        return p.elementBytes() == 4
                ? m.getFloat((int) (4 * index))
                : Float.intBitsToFloat(m.getShort((int) (2 * index)) << 16);
    }
}
