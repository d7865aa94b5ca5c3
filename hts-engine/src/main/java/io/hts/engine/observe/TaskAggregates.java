package io.hts.engine.observe;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.TaskState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.Function;

/**
 * What a {@link RunProfile} adds up over its tasks: the slowest ones, each statistics name's
 * durations and end states, and the totals per device and state. Stateless; each reads the
 * profile's recorded timings through its rules ({@link RunProfile#duration}, a start never before
 * the task's ready time).
 */
final class TaskAggregates {

    private TaskAggregates() {}

    /** See {@link RunProfile#slowest}. */
    static List<TaskTiming> slowest(RunProfile p, int n) {
        if (!p.hasTimings() || p.end == null || n <= 0) {
            return List.of();
        }
        PriorityQueue<TaskTiming> heap = new PriorityQueue<>(Comparator.comparingLong(TaskTiming::durationNanos));
        for (int i = 0; i < p.graph.size(); i++) {
            if (!p.started(i) || p.end[i] == 0) {
                continue;
            }
            long d = p.duration(i);
            if (heap.size() < n) {
                heap.add(p.timing(i));
            } else if (heap.peek().durationNanos() < d) {
                heap.poll();
                heap.add(p.timing(i));
            }
        }
        List<TaskTiming> out = new ArrayList<>(heap);
        out.sort(Comparator.comparingLong(TaskTiming::durationNanos).reversed());
        return out;
    }

    /**
     * Records every task that ran to its end, however it ended, into the tally {@code tallyOf}
     * gives for its statistics name.
     */
    static void recordInto(RunProfile p, Function<String, Profiler.Tally> tallyOf) {
        if (!p.hasTimings() || p.end == null) {
            return;
        }
        String lastName = null;
        Profiler.Tally last = null;
        for (int i = 0; i < p.graph.size(); i++) {
            TaskState state = p.state(i);
            if (!p.started(i) || p.end[i] == 0 || !state.isTerminal()) {
                continue;
            }
            String name = p.graph.statisticsName(i);
            if (last == null || !name.equals(lastName)) {
                last = tallyOf.apply(name);
                lastName = name;
            }
            last.record(p.duration(i), state);
        }
    }

    /** See {@link RunProfile#ranTotals}. */
    static void ranTotals(RunProfile p, RunProfile.RanTotals each) {
        int kinds = TaskState.values().length;
        long[] count = new long[(Device.values().length + 1) * kinds], nanos = new long[count.length];
        for (int i = 0; p.hasTimings() && p.end != null && i < p.graph.size(); i++) {
            if (p.started(i) && p.end[i] >= p.startOf(i)) {
                int k = (p.devices == null ? 0 : p.devices[i]) * kinds
                        + p.state(i).ordinal();
                count[k]++;
                nanos[k] += p.duration(i);
            }
        }
        for (int k = 0; k < count.length; k++) {
            if (count[k] != 0) {
                each.accept(
                        k < kinds ? null : Device.values()[k / kinds - 1],
                        TaskState.values()[k % kinds],
                        count[k],
                        nanos[k]);
            }
        }
    }
}
