package io.hts.engine.run;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.observe.Elapsed;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs each run that did not succeed, once, when it ends, so that a run submitted and forgotten
 * never fails in silence: a failed run at WARN with its failed tasks, its cancelled ones and its
 * first cause with the stack trace, a cancelled run at INFO. At most {@code perMinute} runs are
 * logged a minute (a fixed window); the next line logged says how many were left out. Logger:
 * {@code io.hts.engine.run.FailedRunLog}.
 *
 * <p><b>Concurrency.</b> Runs end on any thread; the window's count is guarded by this object's
 * monitor, taken once per run that did not succeed (never on a successful run's path). Whatever a
 * failure's {@code toString}, message or stack does, nothing here throws: the run's end goes on.
 */
final class FailedRunLog {

    private static final Logger log = LoggerFactory.getLogger(FailedRunLog.class);
    private static final long WINDOW_NANOS = Duration.ofMinutes(1).toNanos();
    /** The most failed tasks named in one line; the rest are counted. */
    private static final int MAX_NAMED = 5;

    private final int perMinute;
    private long windowStart;
    private int loggedInWindow;
    private long leftOut;

    /** @param perMinute the most runs logged a minute; 0 logs none */
    FailedRunLog(int perMinute) {
        this.perMinute = perMinute;
        this.windowStart = System.nanoTime();
    }

    /** A run ended {@code status} (not SUCCEEDED), with the exception its waiters get. */
    void ended(GraphRun run, RunStatus status, GraphRunException failure, long elapsedNanos) {
        if (perMinute == 0 || !(status == RunStatus.FAILED ? log.isWarnEnabled() : log.isInfoEnabled())) {
            return;
        }
        long skipped = admit();
        if (skipped < 0) {
            return;
        }
        try {
            String line = describe(run, status, failure, elapsedNanos, skipped);
            if (status == RunStatus.FAILED) {
                Throwable first = failure.failures().isEmpty()
                        ? null
                        : failure.failures().get(0).error();
                logWithCause(line, first);
            } else {
                log.info(line);
            }
        } catch (Throwable ex) { // a failure whose toString, message or stack throws: say so without it
            try {
                log.warn(
                        "HTS run {} of graph '{}' ended {}; describing its failure threw {}",
                        run.runId(),
                        run.graph().name(),
                        status,
                        ex.getClass().getName());
            } catch (Throwable ignored) {
                // nothing more to do: logging must not break the run's end
            }
        }
    }

    /** @return how many runs were left out since the last one logged, or -1 to leave this one out */
    private synchronized long admit() {
        long now = System.nanoTime();
        if (now - windowStart >= WINDOW_NANOS) {
            windowStart = now;
            loggedInWindow = 0;
        }
        if (loggedInWindow >= perMinute) {
            leftOut++;
            return -1;
        }
        loggedInWindow++;
        long skipped = leftOut;
        leftOut = 0;
        return skipped;
    }

    private static void logWithCause(String line, @Nullable Throwable first) {
        if (first == null) {
            log.warn(line);
        } else if (printable(first)) {
            log.warn(line + "; first cause:", first);
        } else { // a logger would print half a line and then fail: one whole line instead
            log.warn(line + "; its first cause cannot be printed (its toString, message or stack trace throws)");
        }
    }

    /** Whether a logger can print {@code error} and its causes: their toString, messages and stacks do not throw. */
    private static boolean printable(Throwable error) {
        try {
            int depth = 0;
            for (Throwable t = error; t != null && depth < 32; t = t.getCause(), depth++) {
                String.valueOf(t.toString());
                String.valueOf(t.getMessage());
                String.valueOf(t.getLocalizedMessage());
                t.getStackTrace();
                for (Throwable s : t.getSuppressed()) {
                    String.valueOf(s.toString());
                    s.getStackTrace();
                }
            }
            return true;
        } catch (Throwable ex) {
            return false;
        }
    }

    private static String describe(
            GraphRun run, RunStatus status, GraphRunException failure, long elapsedNanos, long skipped) {
        List<TaskFailure> failures = failure.failures();
        int size = run.graph().size();
        StringBuilder sb = new StringBuilder("HTS run ")
                .append(run.runId())
                .append(" of graph '")
                .append(run.graph().name())
                .append("' ")
                .append(status == RunStatus.FAILED ? "failed" : "was cancelled")
                .append(" after ")
                .append(Duration.ofNanos(elapsedNanos).toMillis())
                .append(" ms; of its ")
                .append(Elapsed.count(size, "task"))
                .append(", ")
                .append(failures.size())
                .append(" failed");
        for (int k = 0; k < failures.size() && k < MAX_NAMED; k++) {
            TaskFailure f = failures.get(k);
            sb.append(k == 0 ? " (" : ", ")
                    .append('\'')
                    .append(f.taskName())
                    .append("': ")
                    .append(TaskFailure.describe(f.error()));
        }
        if (failures.size() > MAX_NAMED) {
            sb.append(", and ").append(failures.size() - MAX_NAMED).append(" more");
        }
        if (!failures.isEmpty()) {
            sb.append(')');
        }
        List<String> cancelled = failure.cancelled();
        sb.append(", ").append(cancelled.size()).append(" cancelled");
        if (!cancelled.isEmpty()) {
            sb.append(' ').append(cancelled.size() <= MAX_NAMED ? cancelled : cancelled.subList(0, MAX_NAMED) + "...");
        }
        if (skipped > 0) {
            sb.append(" [")
                    .append(Elapsed.count(skipped, "run"))
                    .append(
                            " that did not succeed were not logged before this one: at most the configured number a minute]");
        }
        return sb.toString();
    }
}
