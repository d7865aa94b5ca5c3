package io.hts.benchmarks;

import io.hts.autoconfigure.metrics.HtsMetrics;
import io.hts.autoconfigure.observation.HtsRunObservations;
import io.hts.benchmarks.workload.Shape;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.SchedulerBuilder;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the starter's observability costs a task, ns per task against the same scheduler without
 * it, in one run (issue 15's overhead figures): 100,000 empty tasks as a chain and as independent
 * tasks, on schedulers that differ only in what is switched on, each as the starter sets it up:
 * <ul>
 *   <li>{@code plain}: the engine's defaults (profiling on), no listener, no scope;
 *   <li>{@code mdc}: {@code hts.logging.mdc} (the starter's default): each body runs with the
 *       run, graph and task in Logback's MDC;
 *   <li>{@code runObservation}: the {@code hts.graph.run} observation per run, current in every
 *       body (what the starter does when an {@code ObservationRegistry} exists), with Micrometer's
 *       meter handler as Boot registers it;
 *   <li>{@code taskObservations}: {@code hts.observation.tasks}: a child observation per body;
 *   <li>{@code taskMetrics}: {@code HtsMetrics} on a registry: the {@code hts.tasks} timers fed
 *       from each finished run's profile;
 *   <li>{@code starterDefaults}: MDC, the run observation and the metrics together, what an
 *       application with Actuator gets.
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 4)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@OperationsPerInvocation(ObservabilityCostBenchmark.TASKS)
public class ObservabilityCostBenchmark {

    static final int TASKS = 100_000;

    @Param({"chain", "independent"})
    public String shape;

    private final LongAdder done = new LongAdder();
    private TaskGraph graph;
    private Scheduler plain;
    private Scheduler mdc;
    private Scheduler runObservation;
    private Scheduler taskObservations;
    private Scheduler taskMetrics;
    private Scheduler starterDefaults;

    @Setup(Level.Trial)
    public void setUp() {
        Shape s = shape.equals("chain") ? Shape.chain(TASKS) : Shape.independent(TASKS);
        graph = s.toGraph(node -> done.increment());
        graph.compile();
        plain = builder().build();
        mdc = builder().logContext(true).build();
        runObservation = observed(builder(), false).build();
        taskObservations = observed(builder(), true).build();
        taskMetrics = builder().build();
        new HtsMetrics(taskMetrics).bindTo(new SimpleMeterRegistry());
        starterDefaults = observed(builder().logContext(true), false).build();
        new HtsMetrics(starterDefaults).bindTo(new SimpleMeterRegistry());
    }

    private static SchedulerBuilder builder() {
        return Scheduler.builder().threads(Runtime.getRuntime().availableProcessors());
    }

    /** The run observation as the starter registers it: a listener and a body scope, on a registry with the meter handler. */
    private static SchedulerBuilder observed(SchedulerBuilder b, boolean perTask) {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
        HtsRunObservations observations = new HtsRunObservations(registry, perTask);
        return b.listener(observations).taskScope(observations);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (Scheduler s :
                new Scheduler[] {plain, mdc, runObservation, taskObservations, taskMetrics, starterDefaults}) {
            s.close();
        }
    }

    private GraphRun run(Scheduler s) {
        GraphRun run = s.execute(graph);
        long n = done.sumThenReset();
        if (n != TASKS) {
            throw new IllegalStateException("ran " + n + " tasks, expected " + TASKS);
        }
        return run;
    }

    @Benchmark
    public GraphRun plain() {
        return run(plain);
    }

    @Benchmark
    public GraphRun mdc() {
        return run(mdc);
    }

    @Benchmark
    public GraphRun runObservation() {
        return run(runObservation);
    }

    @Benchmark
    public GraphRun taskObservations() {
        return run(taskObservations);
    }

    @Benchmark
    public GraphRun taskMetrics() {
        return run(taskMetrics);
    }

    @Benchmark
    public GraphRun starterDefaults() {
        return run(starterDefaults);
    }
}
