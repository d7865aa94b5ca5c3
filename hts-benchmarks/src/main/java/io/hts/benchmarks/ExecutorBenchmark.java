package io.hts.benchmarks;

import io.hts.engine.exec.internal.WorkStealingPool;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The executor alone, HTS's work-stealing pool against {@code ForkJoinPool} of the same
 * parallelism: throughput of external submissions of empty tasks (ns per task, a batch of 10,000
 * submitted from one outside thread and awaited), and the latency of one round trip (submit an
 * empty task, spin until its effect is seen).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ExecutorBenchmark {

    private static final int BATCH = 10_000;

    private WorkStealingPool pool;
    private ForkJoinPool forkJoinPool;
    private final AtomicInteger counter = new AtomicInteger();
    private volatile long seen;
    private long sequence;

    @Setup(Level.Trial)
    public void setUp() {
        int cores = Runtime.getRuntime().availableProcessors();
        pool = WorkStealingPool.builder().threads(cores).build();
        forkJoinPool = new ForkJoinPool(cores);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
        forkJoinPool.shutdown();
    }

    private final Runnable increment = counter::incrementAndGet;

    private void awaitCount(int n) {
        while (counter.get() < n) {
            Thread.onSpinWait();
        }
        counter.set(0);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void htsSubmitThroughput() {
        for (int i = 0; i < BATCH; i++) {
            pool.execute(increment);
        }
        awaitCount(BATCH);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void forkJoinSubmitThroughput() {
        for (int i = 0; i < BATCH; i++) {
            forkJoinPool.execute(increment);
        }
        awaitCount(BATCH);
    }

    @Benchmark
    public long htsRoundTrip() {
        long s = ++sequence;
        pool.execute(() -> seen = s);
        while (seen != s) {
            Thread.onSpinWait();
        }
        return s;
    }

    @Benchmark
    public long forkJoinRoundTrip() {
        long s = ++sequence;
        forkJoinPool.execute(() -> seen = s);
        while (seen != s) {
            Thread.onSpinWait();
        }
        return s;
    }
}
