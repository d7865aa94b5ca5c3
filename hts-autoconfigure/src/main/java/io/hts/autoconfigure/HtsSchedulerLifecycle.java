package io.hts.autoconfigure;

import java.time.Duration;

import io.hts.engine.run.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Graceful shutdown of the scheduler: when the application context stops, no new runs are
 * admitted, queued and running tasks drain for up to {@code spring.lifecycle.timeout-per-shutdown-phase}
 * (less a margin), and whatever is left is cancelled with its state recorded; the worker threads end.
 * Runs in a phase after the web server's graceful shutdown, so requests in flight can still submit.
 */
final class HtsSchedulerLifecycle implements SmartLifecycle {

    /** After the web server's graceful shutdown ({@code DEFAULT_PHASE - 1024}) in stop order. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2048;

    private static final Logger log = LoggerFactory.getLogger(HtsSchedulerLifecycle.class);

    private final Scheduler scheduler;
    private final Duration drain;
    private volatile boolean running;

    HtsSchedulerLifecycle(Scheduler scheduler, Duration drain) {
        this.scheduler = scheduler;
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
        Thread t = new Thread(() -> {
            try {
                drainThenCancel();
            }
            finally {
                running = false;
                callback.run();
            }
        }, "hts-shutdown");
        t.start();
    }

    private void drainThenCancel() {
        scheduler.shutdown();
        try {
            if (!scheduler.awaitTermination(drain)) {
                int cancelled = scheduler.shutdownNow().size();
                log.warn("HTS: {} run(s) still going after {}; cancelled (their task states are recorded)", cancelled,
                        drain);
                scheduler.awaitTermination(Duration.ofSeconds(5));
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            scheduler.shutdownNow();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
