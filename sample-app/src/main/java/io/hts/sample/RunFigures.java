package io.hts.sample;

import io.hts.engine.observe.Elapsed;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.WorkerTime;
import java.time.Duration;

/**
 * A run against its ideal, from its profile: the ideal time is the total work spread over the CPU
 * workers, or the critical path when that is longer; the efficiency is the ideal over the measured
 * makespan. The scheduler's overhead is the share of worker time in which a task was ready and a
 * worker idle ({@link WorkerTime#schedulerShare()}); idleness with nothing ready is the graph's
 * shape ({@link WorkerTime#shapeShare()}).
 *
 * @param makespan from submission to the end of the last task
 * @param work the task durations summed
 * @param criticalPath the longest dependency chain by measured durations
 * @param workers the CPU workers
 * @param schedulerShare the scheduler's overhead, a fraction of worker time
 * @param shapeShare idleness for want of ready tasks, a fraction of worker time
 */
public record RunFigures(
        Duration makespan,
        Duration work,
        Duration criticalPath,
        int workers,
        double schedulerShare,
        double shapeShare) {

    /** The figures of a finished run's profile. */
    public static RunFigures of(RunProfile profile) {
        WorkerTime w = profile.workerTime();
        return new RunFigures(
                profile.makespan(),
                profile.totalWork(),
                profile.criticalPath().length(),
                profile.parallelism(),
                w.schedulerShare(),
                w.shapeShare());
    }

    /** max(work / workers, critical path). */
    public Duration ideal() {
        Duration spread = work.dividedBy(Math.max(1, workers));
        return spread.compareTo(criticalPath) >= 0 ? spread : criticalPath;
    }

    /** The ideal over the makespan (1: no time lost). */
    public double efficiency() {
        return makespan.isZero() ? 1 : (double) ideal().toNanos() / makespan.toNanos();
    }

    /** The figures in one line. */
    public String line() {
        return Format.of(
                "efficiency %s: ideal %s (%s work / %d workers, critical path %s); scheduler overhead %s",
                Format.percent(efficiency()),
                Elapsed.of(ideal()),
                Elapsed.of(work),
                workers,
                Elapsed.of(criticalPath),
                Format.percent(schedulerShare));
    }
}
