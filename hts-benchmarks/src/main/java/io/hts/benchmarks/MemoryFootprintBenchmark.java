package io.hts.benchmarks;

import io.hts.benchmarks.workload.Shape;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Memory per task, measured as retained-heap deltas after full collections (the used heap once
 * {@code System.gc()} has run, with the measured objects kept reachable): the graph definition
 * (tasks, names, body lambdas), the compiled int-indexed form (goal: at most 64 bytes per task),
 * the execution plan a scheduler derives from it, and the state one finished run keeps
 * (dependency words, results, timings) with profiling on and off. Shapes: the 1,000,000-task
 * chain (one edge a task) and a 1,000,000-task layered DAG (three edges a task).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 2, batchSize = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-XX:+UseG1GC"})
public class MemoryFootprintBenchmark {

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    @Param({"chain", "dag"})
    public String shape;

    /**
     * Retained bytes and the number of tasks measured. JMH adds these counters up over the
     * iterations, so bytes per task is each byte counter divided by {@code tasks}.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Bytes {
        /** Tasks measured. */
        public long tasks;
        /** The definition: {@code TaskGraph}, its {@code Task}s, names and body lambdas. */
        public long definitionBytes;
        /** The compiled graph beyond the definition: CSR arrays, in-degrees, order. */
        public long compiledBytes;
        /** The execution plan a scheduler keeps per graph, beyond the compiled graph. */
        public long planBytes;
        /** One finished run's state with profiling on (the default). */
        public long runStateBytes;
        /** One finished run's state with profiling off. */
        public long runStateNoProfilingBytes;
    }

    @Benchmark
    public void measure(Bytes bytes) throws Exception {
        Shape s = shape.equals("chain") ? Shape.chain(1_000_000) : Shape.layered(20_000, 50, 3, 42);

        try (Scheduler profiling =
                        Scheduler.builder().threads(2).retainedRuns(0).build();
                Scheduler lean = Scheduler.builder()
                        .threads(2)
                        .retainedRuns(0)
                        .profiling(false)
                        .build()) {
            long base = retained();
            TaskGraph graph = s.toGraph(i -> {});
            long definition = retained();
            GraphTopology compiled = graph.compile();
            long withCompiled = retained();
            profiling.execute(graph);
            long withPlan = retained();
            GraphRun run = profiling.execute(graph);
            long withRun = retained();
            GraphRun leanRun = lean.execute(graph);
            long withLeanRun = retained();
            bytes.tasks = s.size();
            bytes.definitionBytes = definition - base;
            bytes.compiledBytes = withCompiled - definition;
            bytes.planBytes = withPlan - withCompiled;
            bytes.runStateBytes = withRun - withPlan;
            // the lean scheduler also derives its own execution plan from the graph
            bytes.runStateNoProfilingBytes = withLeanRun - withRun - (withPlan - withCompiled);
            Reference.reachabilityFence(graph);
            Reference.reachabilityFence(compiled);
            Reference.reachabilityFence(run);
            Reference.reachabilityFence(leanRun);
        }
    }

    private static long retained() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50); // lets G1 finish its concurrent work; the minimum of four readings is kept
            used = Math.min(used, MEMORY.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
