package io.hts.gpu.exec;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * How long the device work of a task takes: a running mean and mean absolute deviation per task
 * name (group members under their group's name) and of all tasks, from which the launcher decides
 * when to sleep, when to spin and which tasks get a completion callback.
 *
 * <p><b>Threads.</b> Read and written only by the thread that drives the device (its launcher, or
 * a waiting caller that holds the launcher's token, which orders one holder's writes before the
 * next one's reads), except {@link #meanTaskNanos()}, published through a volatile for
 * {@code status()} on any thread.
 * Estimates only decide when to look: a wrong one costs latency or CPU, never a missed completion.
 */
final class DeviceTimes {

    /** At least this long before long work's expected end the poller stops sleeping and spins. */
    private static final long MIN_SPIN_LEAD = 150_000;

    static final long MAX_SLEEP = TimeUnit.MILLISECONDS.toNanos(5);
    /** How often short tasks, which have no completion callback, are polled past their window. */
    static final long SHORT_POLL = 50_000;

    private static final long CALLBACK_THRESHOLD = TimeUnit.MILLISECONDS.toNanos(1);
    /** Within how long a waiting caller polls the device before it blocks (50 ms from its launch). */
    private static final long CALLER_POLLS = TimeUnit.MILLISECONDS.toNanos(40);

    private static final int MAX_NAMES = 10_000;
    private static final long IDLE_PARK = TimeUnit.MILLISECONDS.toNanos(100);
    /** How often the launcher retries for the token a waiter holds before it parks. */
    private static final int TOKEN_SPINS = 1 << 14;

    /** Device time of all tasks: {mean, mean absolute deviation}, for names without a history. */
    private final long[] all = new long[2];

    private final Map<String, long[]> byName = new HashMap<>();
    /** When the current spin window ends, 0 while none has started. */
    private long spinDeadline;
    /** Since when the launcher has had nothing to do, 0 while it has. */
    private long idleSince;
    /** {@code all[0]}, published for {@code status()}. */
    private volatile long meanTaskNanos = 100_000;
    /**
     * How long before an expected end the poller stops sleeping: twice the measured oversleep of
     * {@code parkNanos} on this host (it can be a millisecond: docs/gpu.md, "Measurements behind
     * the GPU code's choices"), at least {@link #MIN_SPIN_LEAD}.
     */
    final long spinLead;

    DeviceTimes() {
        this.spinLead = Math.max(MIN_SPIN_LEAD, 2 * measureParkOversleep() + 50_000);
    }

    /** The mean oversleep of a short {@code parkNanos} on this host, capped at {@link #MAX_SLEEP}. */
    private static long measureParkOversleep() {
        long worst = 0;
        long total = 0;
        int n = 5;
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            LockSupport.parkNanos(50_000);
            long over = System.nanoTime() - t0 - 50_000;
            total += Math.max(0, over);
            worst = Math.max(worst, over);
        }
        return Math.min(MAX_SLEEP, Math.max(total / n, worst / 2));
    }

    /** The cell of a task name: {mean, mean absolute deviation}, zero until one completed. */
    long[] cellFor(String taskName) {
        int bracket = taskName.indexOf('[');
        String name = bracket > 0 ? taskName.substring(0, bracket) : taskName;
        long[] cell = byName.get(name);
        if (cell == null) {
            cell = new long[2];
            if (byName.size() < MAX_NAMES) {
                byName.put(name, cell);
            }
        }
        return cell;
    }

    /** A task of {@code cell}'s name took {@code took} nanoseconds. */
    void record(long[] cell, long took) {
        update(cell, took);
        update(all, took);
        meanTaskNanos = all[0];
    }

    private static void update(long[] m, long took) {
        if (m[0] == 0) {
            m[0] = took;
        } else {
            m[1] = (m[1] * 7 + Math.abs(took - m[0])) / 8;
            m[0] = (m[0] * 7 + took) / 8;
        }
    }

    /** A name's {mean, deviation} once it has a history, else that of all tasks. */
    long[] estimate(long[] cell) {
        return cell[0] != 0 ? cell : all;
    }

    /**
     * When work that started at {@code startNanos} may end at the earliest: the mean less three
     * deviations. Keeping the estimate below the true end means a wake-up is never late, so
     * lateness never feeds back into the mean.
     */
    long earliestEnd(long startNanos, long[] cell) {
        long[] m = estimate(cell);
        return startNanos + Math.max(0, m[0] - 3 * m[1]);
    }

    /** How long past the expected end the poller keeps spinning for this cell: six deviations. */
    long spread(long[] cell) {
        return 6 * estimate(cell)[1];
    }

    /**
     * Whether a task gets a completion callback: when tasks of its name (or, for a new name, all
     * tasks) take a millisecond or more, or nothing is known yet. Short tasks are caught by
     * spinning, and a callback would cost them more than it saves. A task that the caller of
     * {@code execute} launched ({@code callerPolls}) is polled by that caller until its end, and
     * a callback's call into the JVM on CUDA's thread at that moment may delay the caller's return
     * (docs/gpu.md): it gets one only when it may end after the caller stops
     * polling ({@link #CALLER_POLLS}); the launcher's short polls are the backstop.
     */
    boolean needsCallback(long[] cell, boolean callerPolls) {
        long[] m = estimate(cell);
        long late = m[0] + 3 * m[1];
        return m[0] == 0 || late >= (callerPolls ? CALLER_POLLS : CALLBACK_THRESHOLD);
    }

    /** The mean device time of all tasks, for the backlog estimate of {@code status()}. */
    long meanTaskNanos() {
        return meanTaskNanos;
    }

    // ------------------------------------------------------------------ when the launcher looks again

    /** The launcher made progress: the next wait for work in flight starts a new spin window. */
    void progress() {
        spinDeadline = 0;
        idleSince = 0;
    }

    /**
     * With nothing in flight nor queued: the next task of a waiting caller's loop often follows
     * within tens of microseconds, so spin that long ({@code pollSpinNanos}) before parking (a
     * wake-up costs as much, and far more on some virtual machines).
     *
     * @return how long to park, 0 to spin
     */
    long idleWait(long now, long pollSpinNanos) {
        if (idleSince == 0) {
            idleSince = now;
        }
        return now - idleSince < pollSpinNanos ? 0 : IDLE_PARK;
    }

    /**
     * The launcher found a waiting caller holding the token for the {@code refused}th time in a
     * row: a waiter polls for one step (microseconds), so spin for it, and park (which oversleeps
     * by up to a millisecond on some hosts) only when it keeps the token long.
     */
    static void waitForToken(int refused) {
        if (refused < TOKEN_SPINS) {
            Thread.onSpinWait();
        } else {
            LockSupport.parkNanos(SHORT_POLL);
        }
    }

    /**
     * With work in flight and nothing to do: sleep until shortly before the earliest expected end
     * (parking oversleeps, by up to a millisecond on some hosts, so wake early and spin for the
     * end), spin through the window where it should end (six mean deviations plus
     * {@code pollSpinNanos} past it), then park until a completion callback (long tasks) or for a
     * short poll (short ones, which have none: a callback costs more than polling for them;
     * docs/gpu.md has the figures).
     *
     * @return how long to park, 0 to spin
     */
    long busyWait(List<InFlight> inFlight, long now, long pollSpinNanos) {
        idleSince = 0;
        long expectedEnd = earliestExpectedEnd(inFlight);
        if (now < expectedEnd - spinLead) {
            return Math.min(expectedEnd - spinLead - now, MAX_SLEEP);
        }
        if (spinDeadline == 0) {
            spinDeadline = Math.max(now, expectedEnd) + spinWindow(inFlight) + pollSpinNanos;
        }
        if (now < spinDeadline) {
            return 0;
        }
        return allHaveCallbacks(inFlight) ? MAX_SLEEP : SHORT_POLL;
    }

    /** When the earliest of the tasks in flight may end. */
    private long earliestExpectedEnd(List<InFlight> inFlight) {
        long earliest = Long.MAX_VALUE;
        for (InFlight f : inFlight) {
            earliest = Math.min(earliest, earliestEnd(f.startNanos, f.times));
        }
        return earliest;
    }

    /** How long past the expected end the poller keeps spinning: six mean deviations of the widest. */
    private long spinWindow(List<InFlight> inFlight) {
        long window = 0;
        for (InFlight f : inFlight) {
            window = Math.max(window, spread(f.times));
        }
        return window;
    }

    private static boolean allHaveCallbacks(List<InFlight> inFlight) {
        for (InFlight f : inFlight) {
            if (!f.callback) {
                return false;
            }
        }
        return true;
    }
}
