package io.hts.benchmarks;

import io.hts.benchmarks.workload.CpuWork;
import io.hts.benchmarks.workload.Shape;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where W5's overhead goes (CpuWorkBenchmark's 0.5 ms tasks, wall minus the work per worker): each
 * body records its start, end and thread, and each run is split into the time from the caller's
 * submit to the first body, from the last body's end to the caller's return, how late each worker
 * took its first task ("lead"), and the gaps between one worker's consecutive bodies (split at
 * 20 us into hand-offs and idle waits). Through the public API only; no JMH, so that a run's
 * fixed costs are seen as a user who runs a graph now and then sees them (its per-run code runs
 * cold, as in CpuWorkBenchmark's single-shot iterations).
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.hts.benchmarks.RunEdges [SHAPE [THREADS [WORK_US
 * [RUNS]]]]}, SHAPE {@code dag} (CpuWorkBenchmark's 5,000-task DAG, the default) or {@code
 * independent} (10,000 tasks); THREADS defaults to the available processors, WORK_US to 500,
 * RUNS to 12 (the first 4 are warm-up). Prints one line a run and the medians.
 */
public final class RunEdges {

    private static final long HAND_OFF_NANOS = 20_000;

    private RunEdges() {}

    public static void main(String[] args) {
        String shapeName = args.length > 0 ? args[0] : "dag";
        int threads = args.length > 1
                ? Integer.parseInt(args[1])
                : Runtime.getRuntime().availableProcessors();
        long workMicros = args.length > 2 ? Long.parseLong(args[2]) : 500;
        int runs = args.length > 3 ? Integer.parseInt(args[3]) : 12;
        Shape shape = switch (shapeName) {
            case "dag" -> Shape.layered(100, 50, 3, 42);
            case "independent" -> Shape.independent(10_000);
            default -> throw new IllegalArgumentException("unknown shape '" + shapeName + "'; known: dag, independent");
        };
        long tokens = CpuWork.tokensFor(Duration.ofNanos(workMicros * 1000));
        int n = shape.size();
        long[] starts = new long[n];
        long[] ends = new long[n];
        Thread[] threadOf = new Thread[n];
        TaskGraph graph = shape.toGraph(i -> {
            starts[i] = System.nanoTime();
            CpuWork.run(tokens);
            ends[i] = System.nanoTime();
            threadOf[i] = Thread.currentThread();
        });
        graph.compile();
        List<double[]> rows = new ArrayList<>();
        System.out.printf(
                Locale.ROOT,
                "%s, %d tasks of %d us, %d workers; per run: overhead = (wall - work / workers) / wall%n",
                shapeName,
                n,
                workMicros,
                threads);
        try (Scheduler scheduler = Scheduler.builder().threads(threads).build()) {
            for (int r = 0; r < runs; r++) {
                long t0 = System.nanoTime();
                scheduler.execute(graph);
                long t1 = System.nanoTime();
                if (r < Math.min(4, runs - 1)) {
                    continue;
                }
                double[] row = edges(starts, ends, threadOf, t0, t1, threads);
                rows.add(row);
                System.out.printf(
                        Locale.ROOT,
                        "run %2d: overhead %.2f %%, submit to first body %.0f us, last body to return %.0f us,"
                                + " latest first task %.0f us, hand-offs %.2f us each, waits over 20 us %.0f us a"
                                + " worker%n",
                        r,
                        row[0],
                        row[1],
                        row[2],
                        row[3],
                        row[4],
                        row[5]);
            }
        }
        double[] median = new double[6];
        for (int k = 0; k < median.length; k++) {
            double[] column = new double[rows.size()];
            for (int r = 0; r < column.length; r++) {
                column[r] = rows.get(r)[k];
            }
            Arrays.sort(column);
            median[k] = column[column.length / 2];
        }
        System.out.printf(
                Locale.ROOT,
                "median: overhead %.2f %%, submit to first body %.0f us, last body to return %.0f us, latest first"
                        + " task %.0f us, hand-offs %.2f us each, waits over 20 us %.0f us a worker%n",
                median[0],
                median[1],
                median[2],
                median[3],
                median[4],
                median[5]);
    }

    /** Overhead %, submit to first body, last body to return, latest first task, hand-off, waits (us). */
    private static double[] edges(long[] starts, long[] ends, Thread[] threadOf, long t0, long t1, int workers) {
        long first = Long.MAX_VALUE;
        long last = 0;
        long work = 0;
        Map<Thread, List<long[]>> byWorker = new HashMap<>();
        for (int i = 0; i < starts.length; i++) {
            first = Math.min(first, starts[i]);
            last = Math.max(last, ends[i]);
            work += ends[i] - starts[i];
            byWorker.computeIfAbsent(threadOf[i], t -> new ArrayList<>()).add(new long[] {starts[i], ends[i]});
        }
        long lead = 0;
        long handOffs = 0;
        long handOffTime = 0;
        long waits = 0;
        for (List<long[]> bodies : byWorker.values()) {
            bodies.sort((a, b) -> Long.compare(a[0], b[0]));
            lead = Math.max(lead, bodies.get(0)[0] - first);
            for (int k = 1; k < bodies.size(); k++) {
                long gap = bodies.get(k)[0] - bodies.get(k - 1)[1];
                if (gap > HAND_OFF_NANOS) {
                    waits += gap;
                } else {
                    handOffs++;
                    handOffTime += gap;
                }
            }
        }
        long wall = t1 - t0;
        return new double[] {
            (wall - work / (double) workers) / wall * 100,
            (first - t0) / 1e3,
            (t1 - last) / 1e3,
            lead / 1e3,
            handOffs == 0 ? 0 : handOffTime / 1e3 / handOffs,
            waits / 1e3 / byWorker.size()
        };
    }
}
