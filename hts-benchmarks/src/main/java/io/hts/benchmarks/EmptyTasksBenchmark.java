package io.hts.benchmarks;

import io.hts.benchmarks.baseline.CompletableFutureDag;
import io.hts.benchmarks.baseline.ForkJoinDag;
import io.hts.benchmarks.workload.Shape;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
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
 * Scheduling cost per task with empty bodies (each only counts itself, so that every
 * implementation verifies it ran every task), in nanoseconds per task: the subclasses fix the
 * shape and declare its size as operations per invocation. Warm-up iterations are long (5 s):
 * the workers' loops only reach their final compiled form after several seconds of this load.
 *
 * <p>The fork touches its whole heap at start ({@code -XX:+AlwaysPreTouch}): a million-task run
 * allocates about 100 MB, so without it G1's first pass through a grown young generation takes a
 * page fault per 4 KiB page, and iterations that happen to fall into that pass measured 3-5 times
 * slower (417 against 117 ns a task on the chain with profiling on, in one fork); every contender
 * of the class runs in that same fork.
 *
 * <ul>
 *   <li>{@code hts}: the graph built and compiled once, run repeatedly, default settings;
 *   <li>{@code htsNoProfiling}: the same with per-task timings off;
 *   <li>{@code htsProfilesNotKept}: timings on, but the profiler keeps no run's profile
 *       ({@code retainedRuns(0)}): what keeping the last runs' timing arrays costs, against {@code hts};
 *   <li>{@code htsBuildAndRun}: building, validating and compiling the graph every time as well;
 *   <li>{@code completableFuture}: baseline (a), hand-written {@code CompletableFuture}s on a
 *       {@code ForkJoinPool} of the same parallelism;
 *   <li>{@code forkJoin}: baseline (b), counted completion on a plain {@code ForkJoinPool}.
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-XX:+AlwaysPreTouch"})
public abstract class EmptyTasksBenchmark {

    private Shape shape;
    private TaskGraph graph;
    private Scheduler scheduler;
    private Scheduler schedulerNoProfiling;
    private Scheduler schedulerNotKept;
    private ForkJoinPool forkJoinPool;
    private final LongAdder done = new LongAdder();

    /** The shape this benchmark runs. */
    protected abstract Shape shape();

    @Setup(Level.Trial)
    public void setUp() {
        shape = shape();
        int cores = Runtime.getRuntime().availableProcessors();
        scheduler = Scheduler.builder().threads(cores).build();
        schedulerNoProfiling =
                Scheduler.builder().threads(cores).profiling(false).build();
        schedulerNotKept = Scheduler.builder().threads(cores).retainedRuns(0).build();
        forkJoinPool = new ForkJoinPool(cores);
        graph = shape.toGraph(this::count);
        graph.compile();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scheduler.close();
        schedulerNoProfiling.close();
        schedulerNotKept.close();
        forkJoinPool.shutdown();
    }

    private void count(int node) {
        done.increment();
    }

    private void verify() {
        long n = done.sumThenReset();
        if (n != shape.size()) {
            throw new IllegalStateException("ran " + n + " tasks, expected " + shape.size());
        }
    }

    @Benchmark
    public GraphRun hts() {
        GraphRun run = scheduler.execute(graph);
        verify();
        return run;
    }

    @Benchmark
    public GraphRun htsNoProfiling() {
        GraphRun run = schedulerNoProfiling.execute(graph);
        verify();
        return run;
    }

    @Benchmark
    public GraphRun htsProfilesNotKept() {
        GraphRun run = schedulerNotKept.execute(graph);
        verify();
        return run;
    }

    @Benchmark
    public GraphRun htsBuildAndRun() {
        GraphRun run = scheduler.execute(shape.toGraph(this::count));
        verify();
        return run;
    }

    @Benchmark
    public void completableFuture() {
        CompletableFutureDag.run(shape, forkJoinPool, this::count);
        verify();
    }

    @Benchmark
    public void forkJoin() {
        ForkJoinDag.run(shape, forkJoinPool, this::count);
        verify();
    }
}
