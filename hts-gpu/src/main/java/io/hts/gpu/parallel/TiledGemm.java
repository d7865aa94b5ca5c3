package io.hts.gpu.parallel;

import java.nio.ByteBuffer;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;

/**
 * {@code C = A B} for matrices in host memory, as GPU tasks whose copies overlap with compute:
 * one task uploads B, then a group of tasks each takes a band of A's rows, uploads it, multiplies
 * it by B and downloads its band of C. Each band runs on its own stream, so while one band
 * computes the next one's rows are copying in and the previous one's results copying out (the
 * copy engines and the SMs work at once). The bands wait for B on the device, not on the host.
 *
 * <p>Matrices are <b>row-major</b>, as Java code usually holds them: A is m x k, B is k x n, C is
 * m x n, elements of {@link Blas.Precision#elementBytes()} bytes (FP32 floats, or the raw 16-bit
 * BF16 / FP16 patterns), in direct buffers in native byte order, read and written from their
 * positions. Pinned buffers ({@code GpuBackend.pinnedStaging()}) copy at full bandwidth; pageable
 * ones are staged by the driver at a third of it. Each band needs {@code rows * (k + n)} elements
 * of device memory while it runs, and B needs {@code k * n} until the last band has completed.
 *
 * <pre>{@code
 * TaskGroup<Void> bands = TiledGemm.of(Blas.Precision.BF16, m, n, k).tiles(8).addTo(graph, "gemm", a, b, c);
 * graph.task("report").after(bands).cpu(ctx -> summarise(c));
 * }</pre>
 *
 * <p>How many bands: enough that the first band's upload and the last band's download, which
 * cannot overlap, are small against the whole (8 for 8192² measured on the H200, see
 * docs/gpu.md); more bands than {@code hts.gpu.streams-per-device} wait for a free stream.
 */
public final class TiledGemm {

    private final Blas.Precision precision;
    private final int m;
    private final int n;
    private final int k;
    private final int tiles;

    private TiledGemm(Blas.Precision precision, int m, int n, int k, int tiles) {
        this.precision = precision;
        this.m = m;
        this.n = n;
        this.k = k;
        this.tiles = tiles;
    }

    /**
     * A GEMM of the given shape, in 8 bands of rows (fewer when m is smaller).
     *
     * @param precision element and compute types
     * @param m rows of A and C
     * @param n columns of B and C
     * @param k columns of A, rows of B
     * @return the plan
     */
    public static TiledGemm of(Blas.Precision precision, int m, int n, int k) {
        positive("m", m);
        positive("n", n);
        positive("k", k);
        return new TiledGemm(precision, m, n, k, Math.min(8, m));
    }

    /**
     * The number of bands of A's rows (the last may be shorter).
     *
     * @param tiles from 1 to m
     * @return a plan with that many bands
     */
    public TiledGemm tiles(int tiles) {
        if (tiles < 1 || tiles > m) {
            throw new IllegalArgumentException("a GEMM of " + m + " rows splits into 1 to " + m + " bands; asked for "
                    + tiles);
        }
        return new TiledGemm(precision, m, n, k, tiles);
    }

    /** The number of bands. */
    public int tiles() {
        return tiles;
    }

    /**
     * Adds the tasks to a graph: {@code name/upload-B} and the group {@code name} of bands
     * ({@code name[i]}), which other tasks may depend on; C is complete when the group is.
     *
     * @param graph the graph
     * @param name the group's name
     * @param a A, m x k from its position
     * @param b B, k x n from its position
     * @param c C, m x n from its position, overwritten
     * @return the bands
     */
    public TaskGroup<Void> addTo(TaskGraph graph, String name, ByteBuffer a, ByteBuffer b, ByteBuffer c) {
        long e = precision.elementBytes();
        ByteBuffer hostA = region("A", a, (long) m * k * e);
        ByteBuffer hostB = region("B", b, (long) k * n * e);
        ByteBuffer hostC = region("C", c, (long) m * n * e);
        Task<DeviceBuffer> uploadB = graph.task(name + "/upload-B").gpu(ctx -> {
            GpuContext gpu = ctx.unwrap(GpuContext.class);
            DeviceBuffer device = gpu.allocate(hostB.remaining());
            gpu.upload(hostB.duplicate(), device);
            return device; // released by the run after the last band
        });
        int band = (m + tiles - 1) / tiles;
        return graph.group(name, tiles, (i, t) -> t.after(uploadB).gpu(ctx -> {
            int first = i * band;
            int rows = Math.min(band, m - first);
            GpuContext gpu = ctx.unwrap(GpuContext.class);
            DeviceBuffer rowsOfA = gpu.scratch(rows * k * e);
            DeviceBuffer rowsOfC = gpu.scratch(rows * n * e);
            gpu.upload(hostA.slice((int) (first * k * e), (int) (rows * k * e)), rowsOfA);
            // row-major C = A B is column-major C^T = B^T A^T: B's bytes as an n x k matrix times A's rows
            gpu.blas().gemm(precision, n, rows, k, 1f, ctx.input(uploadB), rowsOfA, 0f, rowsOfC);
            gpu.download(rowsOfC, hostC.slice((int) (first * n * e), (int) (rows * n * e)));
            return null;
        }));
    }

    private static ByteBuffer region(String matrix, ByteBuffer buffer, long bytes) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("matrix " + matrix + " must be in a direct (ideally pinned) buffer;"
                    + " got a heap buffer");
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("matrix " + matrix + " is " + bytes + " bytes; a host buffer holds at"
                    + " most 2 GiB (2147483647 bytes): split the product into several GEMMs");
        }
        if (buffer.remaining() < bytes) {
            throw new IllegalArgumentException("matrix " + matrix + " needs " + bytes + " bytes from the buffer's"
                    + " position; it has " + buffer.remaining());
        }
        return buffer.slice(buffer.position(), (int) bytes);
    }

    private static void positive(String dimension, int value) {
        if (value < 1) {
            throw new IllegalArgumentException("GEMM dimension " + dimension + " must be at least 1, was " + value);
        }
    }

    @Override
    public String toString() {
        return "TiledGemm[" + precision + " " + m + "x" + n + "x" + k + ", " + tiles + " bands]";
    }
}
