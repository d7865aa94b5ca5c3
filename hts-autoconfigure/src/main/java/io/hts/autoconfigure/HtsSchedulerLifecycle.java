package io.hts.autoconfigure;

import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Graceful shutdown of the scheduler: when the application context stops, no new runs are
 * admitted, queued and running tasks drain for up to {@code spring.lifecycle.timeout-per-shutdown-phase}
 * (less a margin), and whatever is left is cancelled with its state recorded; the worker threads end.
 * Runs in a phase after the web server's graceful shutdown, so requests in flight can still submit.
 * A shut-down scheduler cannot start again, so a pause of the context (Spring's test context cache
 * pauses the contexts it is not using) leaves the scheduler running.
 */
final class HtsSchedulerLifecycle implements SmartLifecycle {

    /** After the web server's graceful shutdown ({@code DEFAULT_PHASE - 1024}) in stop order. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2048;

    private static final Logger log = LoggerFactory.getLogger(HtsSchedulerLifecycle.class);

    private final Scheduler scheduler;
    private final Duration phase;
    private final Duration drain;
    private volatile boolean running;

    /**
     * @param phase {@code spring.lifecycle.timeout-per-shutdown-phase}
     * @param drain how long runs may drain: the phase less a margin for cancelling what is left and
     *     for the threads to end
     */
    HtsSchedulerLifecycle(Scheduler scheduler, Duration phase, Duration drain) {
        this.scheduler = scheduler;
        this.phase = phase;
        this.drain = drain;
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        drainThenCancel();
        running = false;
    }

    @Override
    public void stop(Runnable callback) {
        Thread t = new Thread(
                () -> {
                    try {
                        drainThenCancel();
                    } finally {
                        running = false;
                        callback.run();
                    }
                },
                "hts-shutdown");
        t.start();
    }

    private void drainThenCancel() {
        scheduler.shutdown();
        try {
            if (!scheduler.awaitTermination(drain)) {
                List<GraphRun> cancelled = scheduler.shutdownNow();
                log.warn(
                        "HTS: {} still going {} into the shutdown (spring.lifecycle.timeout-per-shutdown-phase={}, less"
                                + " {} kept to cancel what is left and let the threads end); cancelled, their task states"
                                + " recorded: {}",
                        cancelled.size() == 1 ? "1 run" : cancelled.size() + " runs",
                        readable(drain),
                        readable(phase),
                        readable(phase.minus(drain)),
                        names(cancelled));
                scheduler.awaitTermination(Duration.ofSeconds(5));
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            scheduler.shutdownNow();
        }
    }

    /** A duration as one would write it in a property: {@code 1s}, {@code 1500ms}, {@code 2m}. */
    static String readable(Duration d) {
        long ms = d.toMillis();
        if (ms % 60_000 == 0 && ms != 0) {
            return ms / 60_000 + "m";
        }
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }

    private static String names(List<GraphRun> runs) {
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < runs.size() && k < 5; k++) {
            GraphRun r = runs.get(k);
            sb.append(k == 0 ? "" : ", ")
                    .append("run ")
                    .append(r.runId())
                    .append(" of graph '")
                    .append(r.graph().name())
                    .append('\'');
        }
        if (runs.size() > 5) {
            sb.append(", and ").append(runs.size() - 5).append(" more");
        }
        return sb.toString();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /** {@code false}: a pause would shut the scheduler down for good, and the restart find it closed. */
    @Override
    public boolean isPauseable() {
        return false;
    }
}
