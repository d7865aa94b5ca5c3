package io.hts.engine.observe;

import java.time.Duration;
import java.util.Arrays;

/**
 * Where the CPU workers' time went during a run: the capacity (workers x makespan) split into the
 * work the tasks did, the time ready tasks waited while a worker was idle (what the scheduler
 * caused: dispatch, hand-offs, wake-ups), and the time workers were idle with no task ready (what
 * the graph's shape caused: dependencies, a critical path longer than the work spread over the
 * workers, the run's start and end). The last two add up to all idle worker time; neither is the
 * other's. Tasks on a device count in neither (they do not use a worker while they run).
 *
 * @param capacity workers x makespan
 * @param work worker time spent in task bodies (a body that waits while its worker runs other tasks
 *     counts once with them: its worker's time, not the tasks' durations summed)
 * @param schedulerDelay worker time idle while at least as many tasks were ready (the integral of
 *     min(ready tasks waiting, idle workers))
 * @param shapeIdle worker time idle with no task ready for it
 */
public record WorkerTime(Duration capacity, Duration work, Duration schedulerDelay, Duration shapeIdle) {

    /** {@link #schedulerDelay()} as a fraction of {@link #capacity()}. */
    public double schedulerShare() {
        return share(schedulerDelay);
    }

    /** {@link #shapeIdle()} as a fraction of {@link #capacity()}. */
    public double shapeShare() {
        return share(shapeIdle);
    }

    private double share(Duration d) {
        long c = capacity.toNanos();
        return c == 0 ? 0 : (double) d.toNanos() / c;
    }

    /**
     * Sweeps the CPU tasks' wait and run intervals (nanoseconds from submission) in time order.
     *
     * @param workers the CPU workers
     * @param makespan the run's makespan
     * @param ready per CPU task that ran, when it became ready
     * @param start when it started
     * @param end when it ended
     * @param n how many entries the arrays hold
     */
    static WorkerTime sweep(int workers, long makespan, long[] ready, long[] start, long[] end, int n) {
        long[] events = new long[4 * n];
        int m = 0;
        long work = 0;
        for (int k = 0; k < n; k++) {
            long r = clamp(ready[k], makespan);
            long s = clamp(Math.max(start[k], r), makespan);
            long e = clamp(Math.max(end[k], s), makespan);
            events[m++] = r << 2; // one more task waits
            events[m++] = (s << 2) | 1; // it stops waiting
            events[m++] = (s << 2) | 2; // a worker is busy
            events[m++] = (e << 2) | 3; // it is idle again
        }
        Arrays.sort(events, 0, m);
        long delay = 0;
        long idleTotal = 0;
        long waiting = 0;
        long busy = 0;
        long previous = 0;
        for (int k = 0; k < m; k++) {
            long t = events[k] >>> 2;
            long dt = t - previous;
            if (dt > 0) {
                // a body that waits while its worker helps run other tasks overlaps them on one
                // worker: the worker's time counts once, as work
                work += dt * Math.min(busy, workers);
                long idle = Math.max(0, workers - busy);
                delay += dt * Math.min(waiting, idle);
                idleTotal += dt * idle;
                previous = t;
            }
            switch ((int) (events[k] & 3)) {
                case 0 -> waiting++;
                case 1 -> waiting--;
                case 2 -> busy++;
                default -> busy--;
            }
        }
        long tail = makespan - previous; // after the last task: nothing waits, nothing runs
        idleTotal += Math.max(0, tail) * workers;
        long capacity = (long) workers * makespan;
        return new WorkerTime(
                Duration.ofNanos(capacity),
                Duration.ofNanos(work),
                Duration.ofNanos(delay),
                Duration.ofNanos(Math.max(0, idleTotal - delay)));
    }

    private static long clamp(long t, long makespan) {
        return Math.max(0, Math.min(t, makespan));
    }
}
