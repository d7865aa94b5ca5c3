package io.hts.benchmarks;

import io.hts.benchmarks.baseline.CompletableFutureDag;
import io.hts.benchmarks.baseline.ForkJoinDag;
import io.hts.benchmarks.workload.CpuWork;
import io.hts.benchmarks.workload.Shape;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.concurrent.ForkJoinPool;
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
 * The seed's targets 1 and 2 with real CPU work: {@code independent} is 10,000 independent tasks
 * of 0.5 ms each (goal: efficiency = (total work / cores) / wall at least 0.97 on 2 cores);
 * {@code dag} is a 5,000-task DAG of depth 100 (50 tasks a level, 3 parents each in the level
 * above), 0.5 ms per task (goal: overhead = (wall - max(total work / cores, critical path)) / wall
 * below 1 %). Each task times its own work, so efficiency and overhead come from the work
 * really done in the very runs measured (see {@link Outcome}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, batchSize = 1)
@Measurement(iterations = 5, batchSize = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class CpuWorkBenchmark {

    @Param({"independent", "dag"})
    public String shape;

    @Param("500")
    public int workMicros;

    private Shape graphShape;
    private TaskGraph graph;
    private Scheduler scheduler;
    private ForkJoinPool forkJoinPool;
    private long tokens;
    private int cores;
    private long[] durations;
    private final LongAdder done = new LongAdder();

    @Setup(Level.Trial)
    public void setUp() {
        tokens = CpuWork.tokensFor(Duration.ofNanos(workMicros * 1000L));
        graphShape = shape.equals("dag") ? Shape.layered(100, 50, 3, 42) : Shape.independent(10_000);
        cores = Runtime.getRuntime().availableProcessors();
        durations = new long[graphShape.size()];
        scheduler = Scheduler.builder().threads(cores).build();
        forkJoinPool = new ForkJoinPool(cores);
        graph = graphShape.toGraph(this::work);
        graph.compile();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scheduler.close();
        forkJoinPool.shutdown();
    }

    private void work(int node) {
        long t0 = System.nanoTime();
        CpuWork.run(tokens);
        durations[node] = System.nanoTime() - t0;
        done.increment();
    }

    /**
     * Wall time and ideal time of the measured runs, from the work their tasks really did. JMH
     * adds these counters up over the iterations: efficiency = workPerCoreMicros / wallMicros
     * (target 1: at least 0.97), overhead = (wallMicros - idealMicros) / wallMicros (target 2:
     * below 0.01), where ideal = max(total work / cores, critical path).
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Outcome {
        /** Wall time of the runs. */
        public long wallMicros;
        /** Total task work divided by the number of cores. */
        public long workPerCoreMicros;
        /** max(total work / cores, critical path by measured task times). */
        public long idealMicros;
    }

    private void measured(Runnable run, Outcome outcome) {
        done.reset();
        long t0 = System.nanoTime();
        run.run();
        long wall = System.nanoTime() - t0;
        long n = done.sumThenReset();
        if (n != graphShape.size()) {
            throw new IllegalStateException("ran " + n + " tasks, expected " + graphShape.size());
        }
        long total = 0;
        long[] path = new long[graphShape.size()];
        long critical = 0;
        for (int i = 0; i < graphShape.size(); i++) {
            total += durations[i];
            long before = 0;
            for (int k = 0; k < graphShape.predecessorCount(i); k++) {
                before = Math.max(before, path[graphShape.predecessor(i, k)]);
            }
            path[i] = before + durations[i];
            critical = Math.max(critical, path[i]);
        }
        long perCore = total / cores;
        outcome.wallMicros = wall / 1000;
        outcome.workPerCoreMicros = perCore / 1000;
        outcome.idealMicros = Math.max(perCore, critical) / 1000;
    }

    @Benchmark
    public void hts(Outcome outcome) {
        measured(() -> scheduler.execute(graph), outcome);
    }

    @Benchmark
    public void completableFuture(Outcome outcome) {
        measured(() -> CompletableFutureDag.run(graphShape, forkJoinPool, this::work), outcome);
    }

    @Benchmark
    public void forkJoin(Outcome outcome) {
        measured(() -> ForkJoinDag.run(graphShape, forkJoinPool, this::work), outcome);
    }

    /** One unit of work on one core, for reference (the outcome counters use measured task times). */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Warmup(iterations = 3, time = 1)
    @Measurement(iterations = 5, time = 1)
    public void oneTask() {
        CpuWork.run(tokens);
    }
}
