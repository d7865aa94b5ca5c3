package io.hts.engine.run;

import io.hts.engine.observe.Elapsed;
import io.hts.engine.observe.EventType;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches active runs for lack of progress: when a run has finished no task for the stall time,
 * logs its {@link Diagnosis} at WARN (once per stall) and publishes {@link EventType#RUN_STALLED}.
 * Checks a few times per stall period on the scheduler's timer thread; costs nothing per task.
 */
final class StallWatchdog {

    private static final Logger log = LoggerFactory.getLogger(StallWatchdog.class);

    private final Scheduler scheduler;
    private final long stallNanos;
    private final Map<Long, Progress> progress = new ConcurrentHashMap<>();
    private final ScheduledFuture<?> check;

    StallWatchdog(Scheduler scheduler, Duration stall) {
        this.scheduler = scheduler;
        this.stallNanos = stall.toNanos();
        long period = Math.min(Math.max(stall.toMillis() / 4, 5), 1000);
        this.check = scheduler.timer().scheduleAtFixedRate(this::check, period, period, TimeUnit.MILLISECONDS);
    }

    void stop() {
        check.cancel(false);
    }

    private void check() {
        try {
            long now = System.nanoTime();
            progress.keySet().removeIf(id -> scheduler.activeRun(id).isEmpty());
            for (GraphRun run : scheduler.activeRuns()) {
                int pending = run.pendingTasks();
                Progress p = progress.computeIfAbsent(run.runId(), id -> new Progress(pending, now));
                if (p.pending != pending) {
                    p.pending = pending;
                    p.since = now;
                    p.reported = false;
                } else if (!p.reported && now - p.since >= stallNanos && !run.isDone()) {
                    p.reported = true;
                    Diagnosis d = run.diagnose();
                    log.warn(
                            "HTS run {} of graph '{}' has finished no task for {}:\n{}",
                            run.runId(),
                            d.graphName(),
                            Duration.ofNanos(now - p.since),
                            d);
                    var events = scheduler.eventBus();
                    if (events.wants(EventType.RUN_STALLED)) {
                        String detail = "no task finished for " + Elapsed.of(Duration.ofNanos(now - p.since)) + "; "
                                + Elapsed.count(d.frontier().size(), "task") + " ready, running or retrying";
                        UserCode.run(
                                scheduler,
                                () -> events.publish(
                                        EventType.RUN_STALLED,
                                        run.runId(),
                                        d.graphName(),
                                        null,
                                        -1,
                                        null,
                                        -1,
                                        0,
                                        null,
                                        null,
                                        detail));
                    }
                }
            }
        } catch (RuntimeException ex) {
            log.warn("The HTS stall watchdog failed; it will check again", ex);
        }
    }

    private static final class Progress {
        int pending;
        long since;
        boolean reported;

        Progress(int pending, long since) {
            this.pending = pending;
            this.since = since;
        }
    }
}
