package io.hts.gpu.exec;

import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.kernel.KernelCache;
import io.hts.gpu.memory.DeviceBuffer;

/**
 * HTS's built-in elementwise and reduction kernels on a GPU task's stream (FP32). Grids are capped
 * at a few blocks per SM; the kernels' grid-stride loops cover any length.
 */
public final class BuiltinOps {

    private static final int THREADS = 256;

    private final GpuContext ctx;
    private final KernelCache kernels;

    BuiltinOps(GpuContext ctx, KernelCache kernels) {
        this.ctx = ctx;
        this.kernels = kernels;
    }

    private Dim3 grid(long n) {
        long cap = 8L * Math.max(1, ctx.backendSms());
        return Dim3.of((int) Math.max(1, Math.min(cap, (n + THREADS - 1) / THREADS)));
    }

    private static void require(DeviceBuffer b, long n) {
        if (b.bytes() < n * Float.BYTES) {
            throw new IllegalArgumentException(
                    b + " holds " + b.bytes() / Float.BYTES + " floats; the operation needs " + n);
        }
    }

    /**
     * {@code y = a * x + y} over {@code n} floats.
     *
     * @param n elements
     * @param a the factor
     * @param x read
     * @param y read and written
     */
    public void axpy(long n, float a, DeviceBuffer x, DeviceBuffer y) {
        require(x, n);
        require(y, n);
        ctx.launch(
                kernels.builtin("hts_axpy_f32"),
                grid(n),
                Dim3.of(THREADS),
                KernelArguments.of().i64(n).f32(a).pointer(x.address()).pointer(y.address()));
    }

    /**
     * {@code x = a * x} over {@code n} floats.
     *
     * @param n elements
     * @param a the factor
     * @param x read and written
     */
    public void scale(long n, float a, DeviceBuffer x) {
        require(x, n);
        ctx.launch(
                kernels.builtin("hts_scale_f32"),
                grid(n),
                Dim3.of(THREADS),
                KernelArguments.of().i64(n).f32(a).pointer(x.address()));
    }

    /**
     * Sets {@code n} floats to {@code value}.
     *
     * @param n elements
     * @param value the value
     * @param x written
     */
    public void fill(long n, float value, DeviceBuffer x) {
        require(x, n);
        ctx.launch(
                kernels.builtin("hts_fill_f32"),
                grid(n),
                Dim3.of(THREADS),
                KernelArguments.of().i64(n).f32(value).pointer(x.address()));
    }

    /**
     * Writes the sum of {@code n} floats of {@code x} to the first float of {@code out}
     * (zeroed first, on the same stream). FP32 atomics: the order of additions varies, so the last
     * bits of the sum may differ from run to run.
     *
     * @param n elements
     * @param x read
     * @param out at least one float, overwritten
     */
    public void sum(long n, DeviceBuffer x, DeviceBuffer out) {
        require(x, n);
        require(out, 1);
        ctx.cuda().fill(out.address(), (byte) 0, Float.BYTES, ctx.stream());
        ctx.launch(
                kernels.builtin("hts_sum_f32"),
                grid(n),
                Dim3.of(THREADS),
                KernelArguments.of().i64(n).pointer(x.address()).pointer(out.address()));
    }
}
