package io.hts.benchmarks.gpu;

import static io.hts.benchmarks.gpu.GpuBenchmarks.f;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.blas.Blas;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.JCudaApi;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;
import jcuda.Pointer;
import jcuda.cudaDataType;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasComputeType;
import jcuda.jcublas.cublasGemmAlgo;
import jcuda.jcublas.cublasHandle;

/**
 * The diagnoses beside {@link GemmBenchmarks}' GEMM rows: which cuBLAS GEMM types this device
 * accepts, a chain whose bodies time their GEMM with events (a slow kernel or a late completion),
 * and the direct chain while another thread polls an event, as HTS's launcher may.
 */
final class GemmDiagnoses {

    private final CudaApi api;
    private final DeviceInfo device;
    private final GemmBenchmarks.Rows rows;

    GemmDiagnoses(CudaApi api, DeviceInfo device, GemmBenchmarks.Rows rows) {
        this.api = api;
        this.device = device;
        this.rows = rows;
    }

    /** The status of cublasGemmEx for each type and compute type on a small problem. */
    void probe() {
        api.makeCurrent(device.ordinal());
        cublasHandle h = new cublasHandle();
        JCublas2.cublasCreate(h);
        CUdeviceptr m = new CUdeviceptr();
        JCudaDriver.cuMemAlloc(m, 3L * 4 * 64 * 64);
        int[][] cases = {
            {cudaDataType.CUDA_R_32F, cublasComputeType.CUBLAS_COMPUTE_32F},
            {cudaDataType.CUDA_R_32F, cublasComputeType.CUBLAS_COMPUTE_32F_FAST_TF32},
            {cudaDataType.CUDA_R_16BF, cublasComputeType.CUBLAS_COMPUTE_32F},
            {cudaDataType.CUDA_R_16F, cublasComputeType.CUBLAS_COMPUTE_32F},
            {cudaDataType.CUDA_R_16F, cublasComputeType.CUBLAS_COMPUTE_16F}
        };
        StringBuilder sb = new StringBuilder();
        for (int[] c : cases) {
            int status = JCublas2.cublasGemmEx(
                    h,
                    0,
                    0,
                    64,
                    64,
                    64,
                    Pointer.to(new float[] {1f}),
                    m,
                    c[0],
                    64,
                    m.withByteOffset(4 * 64 * 64),
                    c[0],
                    64,
                    Pointer.to(new float[] {0f}),
                    m.withByteOffset(8 * 64 * 64),
                    c[0],
                    64,
                    c[1],
                    cublasGemmAlgo.CUBLAS_GEMM_DEFAULT);
            sb.append(f("GemmEx type %d compute %d: %s; ", c[0], c[1], jcuda.jcublas.cublasStatus.stringFor(status)));
        }
        for (int type : new int[] {cudaDataType.CUDA_R_16BF, cudaDataType.CUDA_R_16F}) {
            int status = JCublas2.cublasSgemmEx(
                    h,
                    0,
                    0,
                    64,
                    64,
                    64,
                    Pointer.to(new float[] {1f}),
                    m,
                    type,
                    64,
                    m.withByteOffset(4 * 64 * 64),
                    type,
                    64,
                    Pointer.to(new float[] {0f}),
                    m.withByteOffset(8 * 64 * 64),
                    type,
                    64);
            sb.append(f("SgemmEx type %d: %s; ", type, jcuda.jcublas.cublasStatus.stringFor(status)));
        }
        JCudaDriver.cuCtxSynchronize();
        JCudaDriver.cuMemFree(m);
        JCublas2.cublasDestroy(h);
        rows.row("cublasGemmEx probe (64³)", sb.toString(), "", "");
    }

    /**
     * A chain of GEMM tasks whose bodies bracket their GEMM with timing events: the GEMM's device
     * time, against the task's launch-to-completion time in the profile, tells a slow kernel from
     * a late completion.
     */
    void timedChain(Scheduler s, Blas.Precision p, int n, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c) {
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
        rows.row(
                f("diagnosis %s chain: GEMM device time (events) / body host time / launch to completion seen", p),
                f("%.3f ms / %.1f µs / %.3f ms", gpu / m / 1e6, body / m / 1e3, seen / m / 1e6),
                "",
                "");
        for (CUevent[] pair : events) {
            JCudaDriver.cuEventDestroy(pair[0]);
            JCudaDriver.cuEventDestroy(pair[1]);
        }
    }

    /** The direct chain again while another thread polls an event without pause, as HTS's launcher may. */
    void polledDirect(
            cublasHandle handle,
            CUstream stream,
            Blas.Precision p,
            int n,
            DeviceBuffer a,
            DeviceBuffer b,
            DeviceBuffer c,
            int chain,
            double unpolled) {
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
            DirectGemm.gemm(handle, p, n, a, b, c);
        }
        JCudaDriver.cuStreamSynchronize(stream);
        double polled = (double) (System.nanoTime() - t0) / chain;
        stop.set(true);
        try {
            poller.join();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        rows.row(
                f("diagnosis %s: direct chain while another thread polls cuEventQuery", p),
                f("%.3f ms (%.0f queries)", polled / 1e6, (double) queries[0]),
                f("%.3f ms unpolled", unpolled / 1e6),
                f("%+.2f %%", 100 * (polled / unpolled - 1)));
        JCudaDriver.cuEventDestroy(e);
        JCudaDriver.cuStreamDestroy(other);
    }
}
