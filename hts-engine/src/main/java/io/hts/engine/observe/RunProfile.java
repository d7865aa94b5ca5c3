package io.hts.engine.observe;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.time.Instant;
import java.util.AbstractList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The profile of one run: per-task timings, and the run's makespan, total work, critical path,
 * where the workers' time went ({@link WorkerTime}) and per-worker usage. Exported as Chrome Trace Event JSON
 * ({@link #toChromeTrace()}, opens in Perfetto) and Graphviz DOT ({@link #toDot()}).
 *
 * <p>Built by the scheduler over the run's own timing arrays (no per-task objects are kept);
 * summaries are computed on first use. A profile taken while the run is still going is a
 * snapshot of the moment it was made: its makespan, total work, critical path, per-worker usage
 * and worker time count each task that was running then with its time so far (from its last
 * attempt's start to that moment), as a worker busy with it; its task timings still say the task
 * has not ended.
 */
public final class RunProfile {

    private final long runId;
    final GraphTopology graph;
    private final RunStatus status;
    private final String policy;
    private final Instant submitted;
    final long submitNanos;
    final long finishNanos;
    /** The run's finish, or for a snapshot of a run still going, the moment the profile was made. */
    final long takenNanos;

    final int parallelism;
    /** As recorded; read through {@link #startOf(int)}. */
    private final long @Nullable [] start;

    final long @Nullable [] end;
    final byte @Nullable [] devices;
    final int @Nullable [] lanes;
    private final int @Nullable [] attempts;
    private final IntFunction<TaskState> states;
    private final TaskCauses causes;
    private final long steals;
    private final long idleSpins;
    private final List<String> abandoned;
    private volatile @Nullable RunSummary summary;
    private volatile @Nullable WorkerTime workerTime;

    /**
     * Created by the scheduler.
     *
     * @param runId the run
     * @param graph the graph's topology (names and edges, no task bodies)
     * @param status the run's status
     * @param policy the policy's name
     * @param submitted when the run was submitted, wall clock
     * @param submitNanos when the run was submitted, {@link System#nanoTime()}
     * @param finishNanos when it finished, -1 while running
     * @param parallelism the number of CPU workers
     * @param start per task, the start of its last attempt (0: never started); {@code null} when
     *     profiling was off; every per-task array is indexed by task
     * @param end per task, the end of its last attempt (0: not ended)
     * @param devices per task, the ordinal of its device + 1 (0: never placed)
     * @param lanes per task, the worker or stream of its last attempt
     * @param attempts per task, attempts started; {@code null} when no task retried
     * @param states the state of task {@code i}
     * @param causes why each failed or cancelled task is so
     * @param steals tasks stolen between workers during the run (pool-wide)
     * @param idleSpins empty rescans by idle workers during the run (pool-wide)
     * @param abandoned timed-out tasks whose bodies had not returned when the run finished
     */
    public RunProfile(
            long runId,
            GraphTopology graph,
            RunStatus status,
            String policy,
            Instant submitted,
            long submitNanos,
            long finishNanos,
            int parallelism,
            long @Nullable [] start,
            long @Nullable [] end,
            byte @Nullable [] devices,
            int @Nullable [] lanes,
            int @Nullable [] attempts,
            IntFunction<TaskState> states,
            TaskCauses causes,
            long steals,
            long idleSpins,
            List<String> abandoned) {
        this.runId = runId;
        this.graph = graph;
        this.status = status;
        this.policy = policy;
        this.submitted = submitted;
        this.submitNanos = submitNanos;
        this.finishNanos = finishNanos;
        this.takenNanos = finishNanos > 0 ? finishNanos : System.nanoTime();
        this.parallelism = parallelism;
        this.start = start;
        this.end = end;
        this.devices = devices;
        this.lanes = lanes;
        this.attempts = attempts;
        this.states = states;
        this.causes = causes;
        this.steals = steals;
        this.idleSpins = idleSpins;
        this.abandoned = List.copyOf(abandoned);
    }

    /** The run's id. */
    public long runId() {
        return runId;
    }

    /** The graph's name. */
    public String graphName() {
        return graph.name();
    }

    /** The graph's topology: names and edges, without the tasks' bodies (a kept profile does not keep its graph alive). */
    public GraphTopology topology() {
        return graph;
    }

    /**
     * An estimate of the memory this profile holds: its per-task arrays, and its topology.
     *
     * @return bytes
     */
    public long estimatedBytes() {
        long perTask = (start != null ? 16 : 0)
                + (devices != null ? 1 : 0)
                + (lanes != null ? 4 : 0)
                + (attempts != null ? 4 : 0);
        return 256
                + perTask * graph.size()
                + 4L * graph.slots() // and the run's state words
                + causes.estimatedBytes()
                + graph.estimatedBytes();
    }

    /** The run's status when the profile was taken. */
    public RunStatus status() {
        return status;
    }

    /** The policy that placed the tasks. */
    public String policy() {
        return policy;
    }

    /** When the run was submitted. */
    public Instant submitted() {
        return submitted;
    }

    /** Whether per-task timings were recorded (profiling on). */
    public boolean hasTimings() {
        return start != null;
    }

    /** The number of CPU workers. */
    public int parallelism() {
        return parallelism;
    }

    /** Steals between workers while the run was active (pool-wide: includes concurrent runs). */
    public long steals() {
        return steals;
    }

    /** Empty rescans by idle workers while the run was active (pool-wide). */
    public long idleSpins() {
        return idleSpins;
    }

    /** Timed-out tasks whose bodies had not returned when the run finished. */
    public List<String> abandoned() {
        return abandoned;
    }

    /** From submission to the end of the last task (or, while running, to the moment the profile was made). */
    public Duration makespan() {
        return Duration.ofNanos(summary().makespan());
    }

    /** The sum of all task durations. */
    public Duration totalWork() {
        return Duration.ofNanos(summary().totalWork());
    }

    /** The critical path by measured durations. */
    public CriticalPath criticalPath() {
        RunSummary s = summary();
        return new CriticalPath(s.criticalPath(), Duration.ofNanos(s.criticalPathNanos()));
    }

    /**
     * The time the run took beyond what its work and its dependencies force, whatever the cause:
     * makespan - max(total work / workers, critical path), never negative. It is not the
     * scheduler's cost: it also holds the graph's own lost parallelism (a shape the workers cannot
     * fill) and JIT warm-up; {@link #workerTime()} splits the workers' idle time between the
     * scheduler and the shape.
     */
    public Duration idealGap() {
        RunSummary s = summary();
        long ideal = Math.max(s.totalWork() / Math.max(1, parallelism), s.criticalPathNanos());
        return Duration.ofNanos(Math.max(0, s.makespan() - ideal));
    }

    /** {@link #idealGap()} as a fraction of the makespan. */
    public double idealGapRatio() {
        long m = summary().makespan();
        return m == 0 ? 0 : (double) idealGap().toNanos() / m;
    }

    /**
     * Where the CPU workers' time went: work, waits of ready tasks while a worker was idle (the
     * scheduler's doing), and idleness with nothing ready (the graph's shape). Computed when first
     * asked (a sort of four entries a task), then kept; empty without timings.
     */
    public WorkerTime workerTime() {
        WorkerTime w = workerTime;
        if (w == null) {
            w = RunSummary.workerTime(this);
            workerTime = w;
        }
        return w;
    }

    /** The mean time from a task being ready to it starting. */
    public Duration meanWait() {
        return Duration.ofNanos(summary().meanWait());
    }

    /** Per CPU worker: tasks, busy and idle time within this run. */
    public List<WorkerUsage> workers() {
        return summary().workers();
    }

    /** Per-task timings, in index order (a view; nothing is copied). */
    public List<TaskTiming> tasks() {
        return new AbstractList<>() {
            @Override
            public TaskTiming get(int i) {
                return timing(i);
            }

            @Override
            public int size() {
                return graph.size();
            }
        };
    }

    /**
     * One task's timing.
     *
     * @param index the task's index
     * @return its timing
     */
    public TaskTiming timing(int index) {
        long s = start != null && start[index] != 0 ? startOf(index) - submitNanos : -1;
        long e = end != null && end[index] != 0 ? end[index] - submitNanos : -1;
        Device d = devices != null && devices[index] != 0 ? Device.values()[devices[index] - 1] : null;
        int lane = lanes != null && d != null ? lanes[index] : -1;
        int att = attempts != null ? attempts[index] : (s >= 0 ? 1 : 0);
        return new TaskTiming(
                index,
                graph.name(index),
                graph.statisticsName(index),
                states.apply(index),
                d,
                lane,
                att,
                readyNanos(index),
                s,
                e,
                causes.of(index));
    }

    /**
     * The longest tasks of this run.
     *
     * @param n how many
     * @return up to {@code n} timings, longest first
     */
    public List<TaskTiming> slowest(int n) {
        return TaskAggregates.slowest(this, n);
    }

    /** Per statistics name, this run's duration statistics. */
    public Map<String, TaskStatistics> statistics() {
        Map<String, Profiler.Tally> tallies = new LinkedHashMap<>();
        int[] names = {0};
        recordInto(name -> Profiler.tally(tallies, name, names));
        Map<String, TaskStatistics> out = new LinkedHashMap<>();
        tallies.forEach((name, t) -> out.put(name, Profiler.statistics(graph.name(), name, t)));
        return out;
    }

    /** Chrome Trace Event JSON of this run; opens in Perfetto and chrome://tracing. */
    public String toChromeTrace() {
        return ChromeTraceExporter.export(this);
    }

    /**
     * Writes this run's Chrome Trace Event JSON to {@code out} as it goes, one task at a time, for
     * a large run whose trace should not be built as one string first (about 160 bytes a task).
     *
     * @param out where to write (a {@code Writer}, a {@code StringBuilder})
     * @throws java.io.IOException when {@code out} fails
     */
    public void writeChromeTrace(Appendable out) throws java.io.IOException {
        ChromeTraceExporter.write(this, out);
    }

    /**
     * This run's Chrome Trace Event JSON as UTF-8 bytes, made as they are read: a server streams a
     * large trace with a few kilobytes in memory.
     *
     * @return the stream; one reader at a time
     */
    public java.io.InputStream chromeTraceStream() {
        return new TraceInputStream(this);
    }

    /** The graph in Graphviz DOT, nodes coloured by state and labelled with durations. */
    public String toDot() {
        return DotExporter.export(graph, this);
    }

    /**
     * Records the duration of every task whose last attempt ran to its end and that has ended
     * (succeeded, failed, or cancelled while it ran) into the tally {@code tallyOf} gives for its
     * statistics name.
     */
    void recordInto(java.util.function.Function<String, Profiler.Tally> tallyOf) {
        TaskAggregates.recordInto(this, tallyOf);
    }

    /**
     * How many tasks ran and their total duration, per device and final state, in one pass over
     * the timings with no {@link TaskTiming} made a task (metrics read it at every run's end).
     *
     * @param each receives each device ({@code null}: not recorded) and state that has tasks
     */
    public void ranTotals(RanTotals each) {
        TaskAggregates.ranTotals(this, each);
    }

    /** Receives {@link #ranTotals}: a device ({@code null}: not recorded), a final state, how many ran, their nanoseconds. */
    @FunctionalInterface
    public interface RanTotals {
        void accept(@Nullable Device device, TaskState state, long count, long nanos);
    }

    /**
     * Task {@code i}'s last attempt's duration; in a snapshot of a run still going, a task running
     * then lasts until then (its time so far). 0 for a task that has not started.
     */
    long duration(int i) {
        if (!timed(i)) {
            return 0;
        }
        long e = end[i];
        if (finishNanos <= 0 && (e < start[i] || e > takenNanos)) {
            e = takenNanos; // running when the snapshot was made (e is 0, or a former attempt's end)
        }
        return Math.max(0, e - startOf(i));
    }

    /**
     * Whether task {@code i} counts in the summary: its last attempt ran to its end, or (in a
     * snapshot of a run still going) it had started when the snapshot was made.
     */
    boolean timed(int i) {
        if (start == null || end == null || start[i] == 0) {
            return false;
        }
        return finishNanos > 0 ? end[i] != 0 : start[i] <= takenNanos;
    }

    /** Task {@code i}'s state, as the profile saw it. */
    TaskState state(int i) {
        return states.apply(i);
    }

    /** Whether task {@code i}'s last attempt started (timings recorded). */
    boolean started(int i) {
        return start != null && start[i] != 0;
    }

    /**
     * When task {@code i}'s last attempt started ({@link System#nanoTime()}), never before its
     * ready time: a worker that goes straight on from a task it ran takes that task's end as the
     * next one's start (one clock read per task), and when the next task has other dependencies,
     * one of them may have read its end a little later on another worker yet counted itself
     * first. The task cannot have started before the last of those ends, so its start is raised to
     * it. Must be called only when {@link #started(int)}.
     */
    long startOf(int i) {
        long s = start[i];
        long ready = readyNanos(i);
        return ready > 0 ? Math.max(s, submitNanos + ready) : s;
    }

    long readyNanos(int i) {
        if (end == null) {
            return 0;
        }
        long ready = 0;
        for (int k = graph.predecessorStart(i); k < graph.predecessorEnd(i); k++) {
            int p = graph.predecessor(k);
            if (end[p] != 0) {
                ready = Math.max(ready, end[p] - submitNanos);
            }
        }
        return ready;
    }

    private RunSummary summary() {
        RunSummary s = summary;
        if (s == null) {
            s = RunSummary.of(this);
            summary = s;
        }
        return s;
    }

    @Override
    public String toString() {
        return "run " + runId + " of graph '" + graph.name() + "': " + status + ", "
                + Elapsed.count(graph.size(), "task")
                + ", makespan " + Elapsed.of(makespan()) + ", total work " + Elapsed.of(totalWork())
                + ", critical path "
                + Elapsed.of(criticalPath().length())
                + String.format(
                        java.util.Locale.ROOT,
                        ", worker time: %.2f%% waits the scheduler caused, %.2f%% idle" + " for want of ready tasks",
                        100 * workerTime().schedulerShare(),
                        100 * workerTime().shapeShare());
    }
}
