package io.hts.engine.observe;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.HdrHistogram.Histogram;

/**
 * Keeps the profiles of the most recent runs (bounded by runs and by their total tasks), and computes from them, per statistics name (a task
 * name, or a group's name), duration percentiles with HdrHistogram (3 significant digits).
 *
 * <p>Recording a finished run is O(1): the profile references the run's timing arrays, nothing is
 * copied or aggregated on the thread that finished the run. Statistics are computed when asked
 * for, over the retained runs, and cached until the next run is recorded. At most
 * {@value #MAX_NAMES} names get their own histogram; the rest are counted under
 * {@value #OTHER}.
 */
public final class Profiler {

    /** The most statistics names with histograms of their own. */
    public static final int MAX_NAMES = 4096;

    /** The name under which tasks beyond {@link #MAX_NAMES} names are counted. */
    public static final String OTHER = "(other)";

    private final int retainedRuns;
    private final long retainedTasks;
    private final ArrayDeque<RunProfile> recent = new ArrayDeque<>();
    private long recentTasks;
    private long recorded;
    private long statisticsVersion = -1;
    private Map<String, TaskStatistics> statistics = Map.of();

    /**
     * Creates a profiler.
     *
     * @param retainedRuns how many recent run profiles to keep, 0 or more
     */
    public Profiler(int retainedRuns) {
        this(retainedRuns, DEFAULT_RETAINED_TASKS);
    }

    /**
     * Creates a profiler bounded by runs and by tasks: a retained profile keeps its graph and
     * timing arrays alive, so a few million-task runs would otherwise hold gigabytes.
     *
     * @param retainedRuns how many recent run profiles to keep, 0 or more
     * @param retainedTasks how many tasks the kept profiles may have together (the newest profile
     *     is kept even when it alone has more)
     */
    public Profiler(int retainedRuns, long retainedTasks) {
        if (retainedRuns < 0) {
            throw new IllegalArgumentException("retained runs must be 0 or more, was " + retainedRuns);
        }
        if (retainedTasks < 0) {
            throw new IllegalArgumentException("retained tasks must be 0 or more, was " + retainedTasks);
        }
        this.retainedRuns = retainedRuns;
        this.retainedTasks = retainedTasks;
    }

    /** The default bound on the tasks of retained profiles. */
    public static final long DEFAULT_RETAINED_TASKS = 2_000_000;

    /** How many recent run profiles are kept. */
    public int retainedRuns() {
        return retainedRuns;
    }

    /**
     * Records a finished run.
     *
     * @param profile its profile
     */
    public synchronized void record(RunProfile profile) {
        recent.addLast(profile);
        recentTasks += profile.graph().size();
        while (recent.size() > retainedRuns || (recentTasks > retainedTasks && recent.size() > 1)) {
            recentTasks -= recent.pollFirst().graph().size();
        }
        recorded++;
    }

    /** The number of runs recorded since creation (or the last reset). */
    public synchronized long recordedRuns() {
        return recorded;
    }

    /** The retained run profiles, oldest first. */
    public synchronized List<RunProfile> recentRuns() {
        return List.copyOf(recent);
    }

    /**
     * A retained run's profile.
     *
     * @param runId the run
     * @return its profile, if still retained
     */
    public synchronized Optional<RunProfile> run(long runId) {
        for (RunProfile p : recent) {
            if (p.runId() == runId) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Per statistics name, duration statistics over the retained runs, sorted by name. */
    public Map<String, TaskStatistics> taskStatistics() {
        List<RunProfile> runs;
        long version;
        synchronized (this) {
            if (statisticsVersion == recorded) {
                return statistics;
            }
            runs = List.copyOf(recent);
            version = recorded;
        }
        Map<String, Histogram> histograms = new HashMap<>();
        for (RunProfile p : runs) {
            p.recordInto(histograms, MAX_NAMES, OTHER);
        }
        Map<String, TaskStatistics> out = new TreeMap<>();
        histograms.forEach((name, h) -> out.put(name, statistics(name, h)));
        Map<String, TaskStatistics> result = java.util.Collections.unmodifiableMap(out);
        synchronized (this) {
            if (version >= statisticsVersion) {
                statisticsVersion = version;
                statistics = result;
            }
        }
        return result;
    }

    /**
     * The longest tasks over the retained runs.
     *
     * @param n how many
     * @return up to {@code n} tasks, longest first
     */
    public List<SlowTask> slowestTasks(int n) {
        List<SlowTask> all = new ArrayList<>();
        for (RunProfile p : recentRuns()) {
            for (TaskTiming t : p.slowest(n)) {
                all.add(new SlowTask(p.runId(), p.graphName(), t));
            }
        }
        all.sort(Comparator.comparingLong((SlowTask s) -> s.timing().durationNanos()).reversed());
        return all.size() <= n ? all : List.copyOf(all.subList(0, n));
    }

    /** Forgets every retained run. */
    public synchronized void reset() {
        recent.clear();
        recentTasks = 0;
        recorded = 0;
        statisticsVersion = -1;
        statistics = Map.of();
    }

    static TaskStatistics statistics(String name, Histogram h) {
        return new TaskStatistics(name, h.getTotalCount(), Duration.ofNanos((long) h.getMean()),
                Duration.ofNanos(h.getValueAtPercentile(50)), Duration.ofNanos(h.getValueAtPercentile(90)),
                Duration.ofNanos(h.getValueAtPercentile(99)), Duration.ofNanos(h.getMaxValue()));
    }

    /**
     * One of the slowest tasks.
     *
     * @param runId the run it belonged to
     * @param graph the graph's name
     * @param timing its timing
     */
    public record SlowTask(long runId, String graph, TaskTiming timing) {
    }
}
