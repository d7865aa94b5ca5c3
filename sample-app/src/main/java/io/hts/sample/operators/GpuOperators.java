package io.hts.sample.operators;

import io.hts.gpu.blas.Blas;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The GPU bodies (hts-gpu's {@link GpuContext}), one task per operator so that its device memory
 * never leaves the device it was put on. On the task's stream: the uploads (and for GEMM a first
 * run, whose C is downloaded for the check), a host function that stamps the start, the timed
 * repetitions, a host function that stamps the end (both {@code cuLaunchHostFunc}: they run when
 * the work before them on the stream is done), then for AXPY the download of y.
 */
public final class GpuOperators {

    private GpuOperators() {}

    /** The stamps host functions leave on the stream, read once the task has completed. */
    public static final class Timing {

        private volatile long start;
        private volatile long end;

        /**
         * The repetitions' time on the device, seen from the host.
         *
         * @throws IllegalStateException when a stamp is missing (the stream's host functions did not run)
         */
        public Stamp stamp() {
            if (start == 0 || end < start) {
                throw new IllegalStateException("the GPU stream's timing stamps are missing: " + start + ", " + end);
            }
            return new Stamp(start, end);
        }
    }

    /**
     * A GEMM's outcome on the GPU.
     *
     * @param product C after one GEMM, filled when the task completes; {@code null} without cuBLAS
     * @param timing the repetitions' stamps; {@code null} without cuBLAS
     * @param unavailable why there is no cuBLAS, {@code null} when there is
     */
    public record GpuGemm(
            float @Nullable [] product,
            @Nullable Timing timing,
            @Nullable String unavailable) {}

    /**
     * Uploads A and B, computes C once (downloaded for the check), then {@code repetitions} GEMMs, timed.
     *
     * @return the outcome, or why cuBLAS is not there (the task succeeds either way)
     */
    public static GpuGemm gemm(GpuContext gpu, int n, int repetitions, float[] a, float[] b) {
        Blas blas;
        try {
            blas = gpu.blas();
        } catch (IllegalStateException noCublas) {
            return new GpuGemm(null, null, noCublas.getMessage());
        }
        DeviceBuffer da = gpu.upload(a);
        DeviceBuffer db = gpu.upload(b);
        DeviceBuffer dc = gpu.scratch((long) n * n * Float.BYTES);
        blas.gemm(Blas.Precision.FP32, n, n, n, 1f, da, db, 0f, dc);
        float[] product = gpu.download(dc, new float[n * n]);
        Timing timing = new Timing();
        gpu.cuda().whenDone(gpu.stream(), () -> timing.start = System.nanoTime());
        for (int r = 0; r < repetitions; r++) {
            blas.gemm(Blas.Precision.FP32, n, n, n, 1f, da, db, 0f, dc);
        }
        gpu.cuda().whenDone(gpu.stream(), () -> timing.end = System.nanoTime());
        gpu.release(da);
        gpu.release(db);
        return new GpuGemm(product, timing, null);
    }

    /**
     * AXPY's outcome on the GPU.
     *
     * @param y y after the repetitions, filled when the task completes
     * @param timing the repetitions' stamps
     */
    public record GpuAxpy(float[] y, Timing timing) {}

    /** Uploads x and y, runs {@code repetitions} times {@code y += alpha x} (the built-in kernel), timed, downloads y. */
    public static GpuAxpy axpy(GpuContext gpu, int repetitions, float alpha, float[] x, float[] y0) {
        DeviceBuffer dx = gpu.upload(x);
        DeviceBuffer dy = gpu.upload(y0);
        Timing timing = new Timing();
        gpu.cuda().whenDone(gpu.stream(), () -> timing.start = System.nanoTime());
        for (int r = 0; r < repetitions; r++) {
            gpu.kernels().axpy(x.length, alpha, dx, dy);
        }
        gpu.cuda().whenDone(gpu.stream(), () -> timing.end = System.nanoTime());
        float[] y = gpu.download(dy, new float[x.length]);
        gpu.release(dx);
        gpu.release(dy);
        return new GpuAxpy(y, timing);
    }
}
