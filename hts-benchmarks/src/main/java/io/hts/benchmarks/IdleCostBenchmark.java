package io.hts.benchmarks;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What an idle executor costs: after a burst of work, the CPU time its threads consume during one
 * second of idleness (thread CPU time), reported as {@code cpuPercentOfOneCore}. Goal for HTS:
 * below 1 %. The whole scheduler (workers and timer) is measured, beside a {@code ForkJoinPool}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1, batchSize = 1)
@Measurement(iterations = 5, batchSize = 1)
@Fork(1)
public class IdleCostBenchmark {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private Scheduler scheduler;
    private ForkJoinPool forkJoinPool;
    private List<Thread> forkJoinThreads;

    /** The measured CPU time. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Idle {
        /** CPU time of the executor's threads over the idle second, as a percentage of one core. */
        public double cpuPercentOfOneCore;
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        scheduler =
                Scheduler.builder().threads(cores).threadNamePrefix("idle-hts-").build();
        forkJoinPool = new ForkJoinPool(cores);
        forkJoinThreads = new ArrayList<>();
        CountDownLatch captured = new CountDownLatch(cores);
        for (int i = 0; i < cores * 4; i++) {
            forkJoinPool.execute(() -> {
                synchronized (forkJoinThreads) {
                    if (!forkJoinThreads.contains(Thread.currentThread())) {
                        forkJoinThreads.add(Thread.currentThread());
                        captured.countDown();
                    }
                }
                try {
                    captured.await(1, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        captured.await(5, TimeUnit.SECONDS);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scheduler.close();
        forkJoinPool.shutdown();
    }

    @Setup(Level.Invocation)
    public void burst() {
        TaskGraph g = TaskGraph.named("burst");
        g.group("t", 10_000, (i, t) -> t.cpu(ctx -> i));
        scheduler.execute(g);
        for (int i = 0; i < 10_000; i++) {
            forkJoinPool.execute(() -> {});
        }
        forkJoinPool.awaitQuiescence(5, TimeUnit.SECONDS);
    }

    @Benchmark
    public void htsIdleSecond(Idle idle) throws InterruptedException {
        idle.cpuPercentOfOneCore = idleCpuPercent(threadsNamed("idle-hts-"));
    }

    @Benchmark
    public void forkJoinIdleSecond(Idle idle) throws InterruptedException {
        idle.cpuPercentOfOneCore = idleCpuPercent(forkJoinThreads);
    }

    private static List<Thread> threadsNamed(String prefix) {
        List<Thread> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                out.add(t);
            }
        }
        return out;
    }

    private static double idleCpuPercent(List<Thread> threads) throws InterruptedException {
        long before = cpu(threads);
        long t0 = System.nanoTime();
        Thread.sleep(1000); // the measurement itself: one second of wall time with the pool idle
        long wall = System.nanoTime() - t0;
        return 100.0 * (cpu(threads) - before) / wall;
    }

    private static long cpu(List<Thread> threads) {
        long sum = 0;
        for (Thread t : threads) {
            long c = THREADS.getThreadCpuTime(t.getId());
            if (c > 0) {
                sum += c;
            }
        }
        return sum;
    }
}
