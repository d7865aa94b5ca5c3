package io.hts.sample.operators;

import io.hts.gpu.blas.Blas;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The GPU bodies (hts-gpu's {@link GpuContext}). Each operator is a chain of GPU tasks so that the
 * timed one does nothing but the operator: a set-up task uploads the operands (and, for GEMM, runs
 * it once and downloads C for the check), the timed task enqueues the repetitions and stamps their
 * end when the device reports them done, and the AXPY's result is downloaded by a task after it.
 */
public final class GpuOperators {

    private GpuOperators() {}

    /**
     * A timed GPU task's start (its body's start: its inputs are complete on the device by then) and
     * end (stamped on the device's launcher thread when its work is done, before the task
     * completes, so every downstream task sees it).
     */
    public static final class Timing {

        private final long start = System.nanoTime();
        private volatile long end;

        void stop() {
            end = System.nanoTime();
        }

        /** The measured time: what the repetitions took on the device, seen from the host. */
        public Stamp stamp() {
            return new Stamp(start, end);
        }
    }

    /**
     * A GEMM's operands on the device, and C after one GEMM, downloaded; or why cuBLAS cannot run.
     *
     * @param a A on the device
     * @param b B
     * @param c C
     * @param product C on the host, filled when the set-up task completes
     * @param unavailable why there is no cuBLAS, {@code null} when there is
     */
    public record DeviceGemm(
            @Nullable DeviceBuffer a,
            @Nullable DeviceBuffer b,
            @Nullable DeviceBuffer c,
            float @Nullable [] product,
            @Nullable String unavailable) {}

    /** Uploads A and B, computes C once and downloads it. */
    public static DeviceGemm gemmSetUp(GpuContext gpu, int n, float[] a, float[] b) {
        Blas blas;
        try {
            blas = gpu.blas();
        } catch (IllegalStateException noCublas) {
            return new DeviceGemm(null, null, null, null, noCublas.getMessage());
        }
        DeviceBuffer da = gpu.upload(a);
        DeviceBuffer db = gpu.upload(b);
        DeviceBuffer dc = gpu.allocate((long) n * n * Float.BYTES);
        blas.gemm(Blas.Precision.FP32, n, n, n, 1f, da, db, 0f, dc);
        return new DeviceGemm(da, db, dc, gpu.download(dc, new float[n * n]), null);
    }

    /** {@code repetitions} GEMMs on the uploaded operands, timed; then gives the device memory back. */
    public static @Nullable Timing gemmTimed(GpuContext gpu, int n, int repetitions, DeviceGemm operands) {
        DeviceBuffer a = operands.a();
        DeviceBuffer b = operands.b();
        DeviceBuffer c = operands.c();
        if (a == null || b == null || c == null) {
            return null;
        }
        Blas blas = gpu.blas();
        Timing timing = new Timing();
        for (int r = 0; r < repetitions; r++) {
            blas.gemm(Blas.Precision.FP32, n, n, n, 1f, a, b, 0f, c);
        }
        gpu.onDeviceDone(timing::stop);
        gpu.release(a);
        gpu.release(b);
        gpu.release(c);
        return timing;
    }

    /**
     * AXPY's vectors on the device.
     *
     * @param x x
     * @param y y
     */
    public record DeviceAxpy(DeviceBuffer x, DeviceBuffer y) {}

    /** Uploads x and y. */
    public static DeviceAxpy axpySetUp(GpuContext gpu, float[] x, float[] y) {
        return new DeviceAxpy(gpu.upload(x), gpu.upload(y));
    }

    /** {@code repetitions} times {@code y += alpha x} (the built-in kernel), timed. */
    public static Timing axpyTimed(GpuContext gpu, int repetitions, float alpha, int length, DeviceAxpy v) {
        Timing timing = new Timing();
        for (int r = 0; r < repetitions; r++) {
            gpu.kernels().axpy(length, alpha, v.x(), v.y());
        }
        gpu.onDeviceDone(timing::stop);
        return timing;
    }

    /** Downloads y and gives the device memory back. */
    public static float[] axpyFetch(GpuContext gpu, int length, DeviceAxpy v) {
        float[] y = gpu.download(v.y(), new float[length]);
        gpu.release(v.x());
        gpu.release(v.y());
        return y;
    }
}
