package io.hts.benchmarks.gpu;

import com.hazelcast.core.HazelcastInstance;
import io.hts.benchmarks.LoopbackHazelcast;
import io.hts.cluster.HazelcastClusterEngine;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * GPU work across members (issue 17), on a machine with a GPU: a distributed group of
 * {@code kernels} GPU-only tasks (each uploads the seed's vector, scales it by its index + 1, sums it
 * on the device and downloads the sum), in slices of {@code slice}. With one member, the submitting
 * member has the GPU and runs every slice itself; with three, the submitting member and a third have
 * <b>no</b> GPU backend and the second has the GPU, so every slice travels to it (the seed's 256 KiB
 * vector by reference through the payload store). The members are embedded in this JVM and joined
 * over TCP/IP on 127.0.0.1; {@code remoteKernels} counts the kernels the GPU member ran for another
 * member. Each sweep's sums are checked against the host's arithmetic. The difference of the two is
 * the remote path's cost for GPU work. docs/cluster.md has the figures.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, batchSize = 1)
@Measurement(iterations = 20, batchSize = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-Xms2g",
            "-Xmx2g",
            "--add-modules=java.se",
            "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.management/sun.management=ALL-UNNAMED",
            "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED"
        })
public class ClusterGpuSweepBenchmark {

    /** Floats in the seed's vector: 256 KiB, above the 64 KiB sent by value. */
    static final int LENGTH = 1 << 16;

    @Param({"1", "3"})
    public int members;

    @Param("256")
    public int kernels;

    @Param("16")
    public int slice;

    private final List<HazelcastInstance> instances = new ArrayList<>();
    private final List<Scheduler> schedulers = new ArrayList<>();
    private final LongAdder remote = new LongAdder();
    private GpuBackend gpu;
    private Sweep sweep;
    private double seedSum;

    /** The graph, alike on every member: the seed's vector and the GPU-only kernels reading it. */
    record Sweep(TaskGraph graph, Task<float[]> seed, TaskGroup<float[]> kernels) {

        static Sweep of(int n, int slice, Runnable onKernel) {
            TaskGraph g = TaskGraph.named("cluster-gpu-sweep");
            Task<float[]> seed = g.task("seed").cpu(ctx -> {
                float[] v = new float[LENGTH];
                for (int k = 0; k < LENGTH; k++) {
                    v[k] = k % 7;
                }
                return v;
            });
            TaskGroup<float[]> kernels = g.group(
                            "kernel",
                            n,
                            (i, t) -> t.after(seed).gpu(ctx -> {
                                onKernel.run();
                                GpuContext gc = ctx.unwrap(GpuContext.class);
                                DeviceBuffer x = gc.scratch((long) LENGTH * Float.BYTES);
                                DeviceBuffer sum = gc.scratch(Float.BYTES);
                                gc.upload(ctx.input(seed), x);
                                gc.kernels().scale(LENGTH, ctx.groupIndex() + 1, x);
                                gc.kernels().sum(LENGTH, x, sum);
                                return gc.download(sum, new float[1]);
                            }))
                    .distributed(slice);
            return new Sweep(g, seed, kernels);
        }
    }

    /** Kernels the GPU member ran for another member, per sweep. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Remote {
        public long remoteKernels;
    }

    @Setup(Level.Trial)
    public void setUp() {
        gpu = GpuBackend.startOnFirstDevice(total -> GpuSettings.defaults(1L << 30))
                .orElseThrow(() -> new IllegalStateException("no GPU: this benchmark needs one"));
        instances.addAll(LoopbackHazelcast.start("hts-gpu-bench", members));
        int withGpu = members == 1 ? 0 : 1; // with three, neither the submitter nor the third has it
        for (int m = 0; m < instances.size(); m++) {
            Scheduler s = Scheduler.builder()
                    .threads(4)
                    .gpuBackend(m == withGpu ? gpu : null)
                    .cluster(new HazelcastClusterEngine(instances.get(m)))
                    .build();
            Sweep own = Sweep.of(kernels, slice, m == withGpu && m != 0 ? remote::increment : () -> {});
            s.register(own.graph());
            if (m == 0) {
                sweep = own;
            }
            schedulers.add(s);
        }
        for (int k = 0; k < LENGTH; k++) {
            seedSum += k % 7;
        }
        HazelcastClusterEngine engine =
                (HazelcastClusterEngine) schedulers.get(0).cluster().orElseThrow();
        LoopbackHazelcast.awaitMembers(engine, members, 1); // every member has published its status
        sweep();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        schedulers.forEach(Scheduler::close);
        instances.forEach(HazelcastInstance::shutdown);
        gpu.close();
    }

    @Benchmark
    public double sweep(Remote counter) {
        long before = remote.sum();
        double total = sweep();
        counter.remoteKernels += remote.sum() - before;
        return total;
    }

    /** One sweep, every kernel's sum checked: (index + 1) times the seed's sum. */
    private double sweep() {
        GraphRun run = schedulers.get(0).execute(sweep.graph());
        List<float[]> sums = run.results(sweep.kernels());
        double total = 0;
        for (int i = 0; i < sums.size(); i++) {
            double expected = (i + 1) * seedSum;
            if (Math.abs(sums.get(i)[0] - expected) > 1e-4 * expected) {
                throw new IllegalStateException("kernel " + i + " summed " + sums.get(i)[0] + ", not " + expected);
            }
            total += sums.get(i)[0];
        }
        return total;
    }
}
