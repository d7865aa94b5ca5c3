package io.hts.gpu.parallel;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

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
 * cannot overlap, are small against the whole (docs/gpu.md has the measured choice for 8192²);
 * more bands than {@code hts.gpu.streams-per-device} wait for a free stream.
 *
 * <p>On a host with several GPUs ({@code MultiGpuBackend}), {@link #devices(int...)} splits the
 * rows into one share per device (data parallel): each device uploads its own B and runs its
 * share's bands, pinned to it, and every band copies its part of C to the host as soon as it is
 * computed, so the partial results' copies overlap with the other bands' compute.
 */
public final class TiledGemm {

    private final Blas.Precision precision;
    private final int m;
    private final int n;
    private final int k;
    private final int tiles;
    private final int[] devices;

    private TiledGemm(Blas.Precision precision, int m, int n, int k, int tiles, int[] devices) {
        this.precision = precision;
        this.m = m;
        this.n = n;
        this.k = k;
        this.tiles = tiles;
        this.devices = devices;
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
        return new TiledGemm(precision, m, n, k, Math.min(8, m), new int[0]);
    }

    /**
     * The number of bands of A's rows (the last may be shorter).
     *
     * @param tiles from 1 to m
     * @return a plan with that many bands
     */
    public TiledGemm tiles(int tiles) {
        int most = m / Math.max(1, devices.length);
        if (tiles < 1 || tiles > most) {
            throw new IllegalArgumentException("a GEMM of " + m + " rows"
                    + (devices.length > 1 ? " over " + devices.length + " GPUs" : "") + " splits into 1 to " + most
                    + " bands" + (devices.length > 1 ? " per GPU" : "") + "; asked for " + tiles);
        }
        return new TiledGemm(precision, m, n, k, tiles, devices);
    }

    /**
     * Splits the rows over several GPUs of the host (data parallel): each device gets an equal share
     * of A's rows, in {@link #tiles(int)} bands, and its own copy of B (uploaded from the host on
     * each device's own link); its bands are pinned to it. Without this, every band may go to any
     * device and B is uploaded once.
     *
     * @param ordinals distinct CUDA device ordinals, at least one
     * @return a plan over those devices
     */
    public TiledGemm devices(int... ordinals) {
        if (ordinals.length == 0
                || java.util.Arrays.stream(ordinals).distinct().count() != ordinals.length
                || java.util.Arrays.stream(ordinals).anyMatch(o -> o < 0)) {
            throw new IllegalArgumentException("devices must be distinct CUDA ordinals of 0 or more, at least one;"
                    + " got " + java.util.Arrays.toString(ordinals));
        }
        if (ordinals.length > m) {
            throw new IllegalArgumentException(
                    "a GEMM of " + m + " rows cannot be split over " + ordinals.length + " GPUs");
        }
        return new TiledGemm(precision, m, n, k, Math.min(tiles, m / ordinals.length), ordinals.clone());
    }

    /** The number of bands (per device, when split over devices). */
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
        int parts = Math.max(1, devices.length);
        List<Task<DeviceBuffer>> uploads = new ArrayList<>(parts);
        for (int d = 0; d < parts; d++) {
            TaskBuilder upload = graph.task(name + "/upload-B" + (devices.length == 0 ? "" : "@cuda:" + devices[d]));
            if (devices.length > 0) {
                upload.onGpu(devices[d]);
            }
            uploads.add(upload.gpu(ctx -> {
                GpuContext gpu = ctx.unwrap(GpuContext.class);
                DeviceBuffer device = gpu.allocate(hostB.remaining());
                gpu.upload(hostB.duplicate(), device);
                return device; // released by the run after the device's last band
            }));
        }
        return graph.group(name, parts * tiles, (i, t) -> {
            int part = i / tiles;
            int[] span = band(m, parts, tiles, i);
            int first = span[0];
            int rows = span[1];
            Task<DeviceBuffer> uploadB = uploads.get(part);
            t.after(uploadB);
            if (devices.length > 0) {
                t.onGpu(devices[part]);
            }
            return t.gpu(ctx -> {
                if (rows <= 0) {
                    return null; // more bands than rows in this share
                }
                GpuContext gpu = ctx.unwrap(GpuContext.class);
                DeviceBuffer rowsOfA = gpu.scratch(rows * k * e);
                DeviceBuffer rowsOfC = gpu.scratch(rows * n * e);
                gpu.upload(hostA.slice((int) (first * k * e), (int) (rows * k * e)), rowsOfA);
                // row-major C = A B is column-major C^T = B^T A^T: B's bytes as an n x k matrix times A's rows
                gpu.blas().gemm(precision, n, rows, k, 1f, ctx.input(uploadB), rowsOfA, 0f, rowsOfC);
                gpu.download(rowsOfC, hostC.slice((int) (first * n * e), (int) (rows * n * e)));
                return null;
            });
        });
    }

    /**
     * The rows of band {@code i}: the rows are split into {@code parts} equal shares (one per
     * device), each share into {@code tiles} bands of equal height (the last shorter, or empty when
     * a share has fewer rows than bands).
     *
     * @return {first row, row count}
     */
    static int[] band(int m, int parts, int tiles, int i) {
        int part = i / tiles;
        int partFirst = (int) ((long) m * part / parts);
        int partRows = (int) ((long) m * (part + 1) / parts) - partFirst;
        int height = (partRows + tiles - 1) / tiles;
        int first = partFirst + Math.min(partRows, (i % tiles) * height);
        return new int[] {first, Math.max(0, Math.min(height, partFirst + partRows - first))};
    }

    private static ByteBuffer region(String matrix, ByteBuffer buffer, long bytes) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException(
                    "matrix " + matrix + " must be in a direct (ideally pinned) buffer;" + " got a heap buffer");
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
        return "TiledGemm[" + precision + " " + m + "x" + n + "x" + k + ", " + tiles + " bands"
                + (devices.length == 0 ? "" : " on each of cuda:" + java.util.Arrays.toString(devices)) + "]";
    }
}
