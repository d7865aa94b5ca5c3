package io.hts.benchmarks;

import io.hts.engine.exec.internal.ResourceDemand;
import io.hts.engine.exec.internal.ResourceLimiter;
import io.hts.engine.graph.TaskBuilder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The resource limiter's uncontended fast path beside {@code java.util.concurrent.Semaphore}: one
 * {@code tryAcquire} and {@code release} pair of one I/O permit (ns per pair, one thread), with 0,
 * 10,000 and 80,000 waiters queued on another resource they cannot get (a held GPU-memory
 * demand). The pair must cost the same whatever the number of waiters: neither an acquire nor a
 * release looks at waiters of a resource it does not touch. The semaphore has no waiters to
 * queue; it is the floor for one permit taken and returned under one atomic variable.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ResourceLimiterBenchmark {

    /** A limiter with an I/O permit free and {@code waiters} demands queued for GPU memory. */
    @State(Scope.Thread)
    public static class Limiter {
        /** How many waiters are queued (on GPU memory, which stays taken). */
        @Param({"0", "10000", "80000"})
        public int waiters;

        ResourceLimiter limiter;
        ResourceDemand io;

        @Setup(Level.Trial)
        public void setUp() {
            Map<String, Long> capacities = new LinkedHashMap<>();
            capacities.put("io", 1L);
            capacities.put(TaskBuilder.GPU_MEMORY, 1L << 30);
            limiter = new ResourceLimiter(capacities);
            io = limiter.demand(Map.of("io", 1L), "benchmark");
            ResourceDemand memory = limiter.demand(Map.of(TaskBuilder.GPU_MEMORY, 1L << 30), "waiter");
            if (!limiter.tryAcquire(memory)) {
                throw new IllegalStateException("the GPU memory is not free at the start");
            }
            for (int i = 0; i < waiters; i++) {
                if (limiter.acquireOrWait(memory, () -> {}) == null) {
                    throw new IllegalStateException("a waiter got the held GPU memory");
                }
            }
        }
    }

    /** The baseline: one permit. */
    @State(Scope.Thread)
    public static class OnePermit {
        final Semaphore semaphore = new Semaphore(1);
    }

    @Benchmark
    public boolean limiterTryAcquireRelease(Limiter s) {
        boolean taken = s.limiter.tryAcquire(s.io);
        if (taken) {
            s.limiter.release(s.io);
        }
        return taken;
    }

    @Benchmark
    public boolean semaphoreTryAcquireRelease(OnePermit s) {
        boolean taken = s.semaphore.tryAcquire();
        if (taken) {
            s.semaphore.release();
        }
        return taken;
    }
}
