package io.hts.engine.observe;

import io.hts.engine.graph.Device;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What a {@link RunProfile} derives from its timing arrays: makespan, total work, the critical path
 * by measured durations, the mean wait from ready to start, per-worker usage, and (separately, as it
 * sorts) where the workers' time went. Computed from the profile's arrays on first use; the profile
 * keeps the result in a volatile field, and a racing second computation gives an equal value.
 *
 * @param makespan nanoseconds from submission to the end of the last task (or, while running, to the
 *     moment the profile was made)
 * @param totalWork the sum of the tasks' durations (a task running when the profile was made: its
 *     time so far)
 * @param criticalPathNanos the critical path's length
 * @param criticalPath the critical path's task names, first to last
 * @param meanWait mean nanoseconds from ready to start
 * @param workers per CPU worker: tasks, busy and idle time
 */
record RunSummary(
        long makespan,
        long totalWork,
        long criticalPathNanos,
        List<String> criticalPath,
        long meanWait,
        List<WorkerUsage> workers) {

    /** One pass over the tasks in topological order. */
    static RunSummary of(RunProfile p) {
        int n = p.graph.size();
        long total = 0;
        long waitSum = 0;
        long waitCount = 0;
        long[] busy = new long[p.parallelism];
        long[] count = new long[p.parallelism];
        long[] path = new long[n];
        int[] via = new int[n];
        long bestPath = 0;
        int bestEnd = -1;
        for (int k = 0; k < n; k++) {
            int i = p.graph.topological(k);
            long d = p.duration(i);
            long longestBefore = 0;
            int from = -1;
            for (int q = p.graph.predecessorStart(i); q < p.graph.predecessorEnd(i); q++) {
                int pred = p.graph.predecessor(q);
                if (path[pred] > longestBefore) {
                    longestBefore = path[pred];
                    from = pred;
                }
            }
            path[i] = longestBefore + d;
            via[i] = from;
            if (path[i] > bestPath) {
                bestPath = path[i];
                bestEnd = i;
            }
            if (p.timed(i)) {
                total += d;
                waitSum += Math.max(0, p.startOf(i) - p.submitNanos - p.readyNanos(i));
                waitCount++;
                if (p.devices != null && p.lanes != null && p.devices[i] == Device.CPU.ordinal() + 1) {
                    int w = p.lanes[i];
                    if (w >= 0 && w < p.parallelism) {
                        busy[w] += d;
                        count[w]++;
                    }
                }
            }
        }
        long makespan = p.takenNanos - p.submitNanos;
        List<String> criticalPath = new ArrayList<>();
        for (int i = bestEnd; i >= 0; i = via[i]) {
            criticalPath.add(p.graph.name(i));
        }
        Collections.reverse(criticalPath);
        List<WorkerUsage> workers = new ArrayList<>(p.parallelism);
        for (int w = 0; w < p.parallelism; w++) {
            workers.add(new WorkerUsage(w, count[w], busy[w], Math.max(0, makespan - busy[w])));
        }
        return new RunSummary(
                makespan,
                total,
                bestPath,
                List.copyOf(criticalPath),
                waitCount == 0 ? 0 : waitSum / waitCount,
                List.copyOf(workers));
    }

    /**
     * Where the CPU workers' time went: a sweep over the CPU tasks' ready, start and end times (a
     * task running when a snapshot was made: busy until then).
     */
    static WorkerTime workerTime(RunProfile p) {
        long makespan = p.makespan().toNanos();
        int n = p.graph.size();
        long[] ready = new long[p.hasTimings() ? n : 0];
        long[] begin = new long[ready.length];
        long[] finish = new long[ready.length];
        int k = 0;
        for (int i = 0; i < ready.length; i++) {
            if (p.timed(i) && p.devices != null && p.devices[i] == Device.CPU.ordinal() + 1) {
                ready[k] = p.readyNanos(i);
                begin[k] = p.startOf(i) - p.submitNanos;
                finish[k] = begin[k] + p.duration(i);
                k++;
            }
        }
        return WorkerTime.sweep(p.parallelism, makespan, ready, begin, finish, k);
    }
}
