package io.hts.sample;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * Submits a run and waits for it; a run still going after {@code quiet} gets a progress line (tasks
 * done of all, time so far) every {@code every}, from the run's own count of unfinished tasks.
 */
final class RunProgress {

    private static final Duration POLL = Duration.ofMillis(100);

    private final PrintStream out;
    private final Duration quiet;
    private final Duration every;

    RunProgress(PrintStream out, Duration quiet, Duration every) {
        this.out = out;
        this.quiet = quiet;
        this.every = every;
    }

    /**
     * Runs the graph to its end.
     *
     * @param scheduler where it runs
     * @param graph the graph
     * @return the finished run (successful or not)
     */
    GraphRun run(Scheduler scheduler, TaskGraph graph) {
        GraphRun run = scheduler.submit(graph);
        long start = System.nanoTime();
        long next = start + quiet.toNanos();
        int total = graph.size();
        while (!run.isDone()) {
            try {
                run.await(POLL);
            } catch (TimeoutException stillRunning) {
                long now = System.nanoTime();
                if (now >= next) {
                    out.println(Format.of(
                            "      ... %s: %s of %s tasks done, %.1f s",
                            graph.name(),
                            Format.count(total - (long) run.pendingTasks()),
                            Format.count(total),
                            (now - start) / 1e9));
                    next = now + every.toNanos();
                }
            } catch (GraphRunException failed) {
                return run;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                run.cancel();
                return run;
            }
        }
        return run;
    }
}
