package io.hts.engine.observe;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * Keeps the profiles of the most recent runs, bounded by their number and by the memory they hold,
 * and computes from them, per graph and statistics name (a task name, or a group's name), duration
 * percentiles with HdrHistogram (3 significant digits) of every task that ran to its end, however it
 * ended, with how many of them failed or were cancelled.
 *
 * <p>A kept profile holds the run's timing arrays and its graph's topology (names and edges), never
 * the graph's tasks or anything their bodies captured: a graph the application dropped is
 * collectable while its last runs' profiles are kept. The bound in bytes
 * ({@link RunProfile#estimatedBytes()}) evicts the oldest profiles first; a profile larger than the
 * whole bound is not kept at all (its run's own {@code profile()} still has it).
 *
 * <p>Statistics are computed when asked for, over the kept runs. At most {@value #MAX_NAMES} names
 * get their own histogram; the rest are counted under {@value #OTHER}. Thread-safe.
 */
public final class Profiler {

    /*
     * Recording a finished run is O(1) (plus evictions): the profile references the run's arrays,
     * nothing is copied or aggregated on the thread that finished the run. Statistics are computed
     * over the kept runs when asked for and cached until the next run is recorded.
     */

    /** The most statistics names with histograms of their own. */
    public static final int MAX_NAMES = 4096;

    /** The name under which tasks beyond {@link #MAX_NAMES} names are counted. */
    public static final String OTHER = "(other)";

    /** The default bound on the memory of kept profiles: 64 MiB. */
    public static final long DEFAULT_RETAINED_BYTES = 64L << 20;

    private final int retainedRuns;
    private final long retainedBytes;
    private final ArrayDeque<RunProfile> recent = new ArrayDeque<>();
    private long recentBytes;
    /** How many kept profiles share each topology (runs of one graph share it; it is counted once). */
    private final Map<GraphTopology, Integer> topologies = new IdentityHashMap<>();

    private long recorded;
    private long notKept;
    private long statisticsVersion = -1;
    private Map<String, Map<String, TaskStatistics>> statistics = Map.of();

    /**
     * Creates a profiler keeping at most {@link #DEFAULT_RETAINED_BYTES} of profiles.
     *
     * @param retainedRuns how many recent run profiles to keep, 0 or more
     */
    public Profiler(int retainedRuns) {
        this(retainedRuns, DEFAULT_RETAINED_BYTES);
    }

    /**
     * Creates a profiler bounded by runs and by bytes.
     *
     * @param retainedRuns how many recent run profiles to keep, 0 or more
     * @param retainedBytes how much memory the kept profiles may hold together, 0 or more
     */
    public Profiler(int retainedRuns, long retainedBytes) {
        if (retainedRuns < 0) {
            throw new IllegalArgumentException("retained runs must be 0 or more, was " + retainedRuns);
        }
        if (retainedBytes < 0) {
            throw new IllegalArgumentException("retained profile bytes must be 0 or more, was " + retainedBytes);
        }
        this.retainedRuns = retainedRuns;
        this.retainedBytes = retainedBytes;
    }

    /** How many recent run profiles are kept at most. */
    public int retainedRuns() {
        return retainedRuns;
    }

    /** How much memory the kept profiles may hold together. */
    public long retainedBytes() {
        return retainedBytes;
    }

    /**
     * Records a finished run.
     *
     * @param profile its profile
     */
    public synchronized void record(RunProfile profile) {
        recorded++;
        if (retainedRuns == 0 || profile.estimatedBytes() > retainedBytes) {
            notKept++;
            return;
        }
        recent.addLast(profile);
        recentBytes += bytesAdded(profile);
        while (recent.size() > retainedRuns || recentBytes > retainedBytes) {
            recentBytes -= bytesRemoved(recent.pollFirst());
        }
    }

    /** A profile's own arrays, and its topology when no other kept profile shares it. */
    private long bytesAdded(RunProfile p) {
        long topology = p.topology().estimatedBytes();
        long own = p.estimatedBytes() - topology;
        return topologies.merge(p.topology(), 1, Integer::sum) == 1 ? own + topology : own;
    }

    private long bytesRemoved(RunProfile p) {
        long topology = p.topology().estimatedBytes();
        long own = p.estimatedBytes() - topology;
        int left = topologies.merge(p.topology(), -1, Integer::sum);
        if (left == 0) {
            topologies.remove(p.topology());
            return own + topology;
        }
        return own;
    }

    /** The memory the kept profiles hold now, an estimate in bytes. */
    public synchronized long retainedBytesNow() {
        return recentBytes;
    }

    /** Runs recorded whose profile alone was larger than the bound (or none are kept), so it was not kept. */
    public synchronized long notKeptRuns() {
        return notKept;
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

    /**
     * Per graph and statistics name, duration statistics over the retained runs, both sorted by
     * name: two graphs' tasks that share a name are apart.
     */
    public Map<String, Map<String, TaskStatistics>> taskStatistics() {
        List<RunProfile> runs;
        long version;
        synchronized (this) {
            if (statisticsVersion == recorded) {
                return statistics;
            }
            runs = List.copyOf(recent);
            version = recorded;
        }
        Map<String, Map<String, Tally>> byGraph = new HashMap<>();
        int[] names = {0};
        for (RunProfile p : runs) {
            Map<String, Tally> tallies = byGraph.computeIfAbsent(p.graphName(), g -> new HashMap<>());
            p.recordInto(name -> tally(tallies, name, names));
        }
        Map<String, Map<String, TaskStatistics>> out = new TreeMap<>();
        byGraph.forEach((graph, tallies) -> {
            Map<String, TaskStatistics> perName = new TreeMap<>();
            tallies.forEach((name, t) -> perName.put(name, statistics(graph, name, t)));
            if (!perName.isEmpty()) {
                out.put(graph, java.util.Collections.unmodifiableMap(perName));
            }
        });
        Map<String, Map<String, TaskStatistics>> result = java.util.Collections.unmodifiableMap(out);
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
        all.sort(Comparator.comparingLong((SlowTask s) -> s.timing().durationNanos())
                .reversed());
        return all.size() <= n ? all : List.copyOf(all.subList(0, n));
    }

    /** Forgets every retained run. */
    public synchronized void reset() {
        recent.clear();
        topologies.clear();
        recentBytes = 0;
        notKept = 0;
        recorded = 0;
        statisticsVersion = -1;
        statistics = Map.of();
    }

    /** One statistics name's durations, and how many of its tasks failed or were cancelled while they ran. */
    static final class Tally {

        final Histogram durations = new Histogram(3);
        long failed;
        long cancelled;

        /** A task that ran for {@code nanos} and ended in {@code state}. */
        void record(long nanos, TaskState state) {
            durations.recordValue(nanos);
            if (state == TaskState.FAILED) {
                failed++;
            } else if (state == TaskState.CANCELLED) {
                cancelled++;
            }
        }
    }

    /**
     * The tally of {@code name} in {@code tallies}, made when missing; once {@code names[0]}
     * (tallies made so far, over every map it counts for) reaches {@value #MAX_NAMES}, a new
     * name's tasks go to {@value #OTHER}'s.
     */
    static Tally tally(Map<String, Tally> tallies, String name, int[] names) {
        Tally t = tallies.get(name);
        if (t != null) {
            return t;
        }
        return tallies.computeIfAbsent(names[0] < MAX_NAMES ? name : OTHER, k -> {
            names[0]++;
            return new Tally();
        });
    }

    static TaskStatistics statistics(String graph, String name, Tally t) {
        Histogram h = t.durations;
        return new TaskStatistics(
                graph,
                name,
                h.getTotalCount(),
                Duration.ofNanos((long) h.getMean()),
                Duration.ofNanos(h.getValueAtPercentile(50)),
                Duration.ofNanos(h.getValueAtPercentile(90)),
                Duration.ofNanos(h.getValueAtPercentile(99)),
                Duration.ofNanos(h.getMaxValue()),
                t.failed,
                t.cancelled);
    }

    /**
     * One of the slowest tasks.
     *
     * @param runId the run it belonged to
     * @param graphName the graph's name
     * @param timing its timing
     */
    public record SlowTask(long runId, String graphName, TaskTiming timing) {}
}
