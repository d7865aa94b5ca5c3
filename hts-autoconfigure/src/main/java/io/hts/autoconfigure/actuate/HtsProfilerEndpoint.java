package io.hts.autoconfigure.actuate;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.Profiler;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskStatistics;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.observe.WorkerTime;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.core.io.InputStreamResource;
import org.springframework.util.MimeType;
import org.springframework.util.MimeTypeUtils;

/**
 * {@code /actuator/htsprofiler}: the profiler's retained runs (makespan, work, critical path,
 * where the workers' time went), the slowest tasks and per-name duration statistics (p50/p90/p99, from
 * HdrHistogram); {@code /actuator/htsprofiler/{runId}} one run's profile (every task's state and,
 * for a failed or cancelled one, its cause, paged with {@code offset} and {@code limit}), and with
 * {@code ?format=trace} its Chrome Trace Event JSON (opens in Perfetto) or {@code ?format=dot} its
 * graph in DOT. A run still going is served too, as a snapshot of its profile. Each task of the
 * task list names its direct dependencies ({@code after}); a failed task has its stack trace
 * ({@code stackTrace}), of the latest runs' first failures since the endpoint was created. Read-only.
 */
@Endpoint(id = "htsprofiler", defaultAccess = Access.READ_ONLY)
public class HtsProfilerEndpoint {

    private final Scheduler scheduler;
    private final HtsFailureTraces traces = new HtsFailureTraces();

    /**
     * Creates the endpoint, and subscribes to the scheduler a listener that keeps the stack traces
     * of the tasks that fail from then on (no routine event: it costs nothing while tasks succeed).
     *
     * @param scheduler the scheduler whose profiler it serves
     */
    public HtsProfilerEndpoint(Scheduler scheduler) {
        this.scheduler = scheduler;
        scheduler.addListener(traces);
    }

    /** Recent runs, slowest tasks and per-name statistics. */
    @ReadOperation
    public Map<String, Object> summary() {
        Profiler profiler = scheduler.profiler();
        Map<String, Object> out = new LinkedHashMap<>();
        List<Map<String, Object>> runs = new ArrayList<>();
        for (RunProfile p : profiler.recentRuns()) {
            runs.add(run(p));
        }
        out.put("recentRuns", runs);
        List<Map<String, Object>> slowest = new ArrayList<>();
        for (Profiler.SlowTask t : profiler.slowestTasks(10)) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("runId", t.runId());
            m.put("graph", t.graphName());
            m.put("task", t.timing().taskName());
            m.put("millis", millis(t.timing().durationNanos()));
            slowest.add(m);
        }
        out.put("slowestTasks", slowest);
        Map<String, Object> statistics = new LinkedHashMap<>(); // by graph, then task or group name
        profiler.taskStatistics().forEach((graph, byName) -> {
            Map<String, Object> perName = new LinkedHashMap<>();
            for (TaskStatistics s : byName.values()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("count", s.count()); // every task that ran to its end, however it ended
                m.put("failed", s.failed());
                m.put("cancelled", s.cancelled()); // while it ran
                m.put("meanMillis", millis(s.mean()));
                m.put("p50Millis", millis(s.p50()));
                m.put("p90Millis", millis(s.p90()));
                m.put("p99Millis", millis(s.p99()));
                m.put("maxMillis", millis(s.max()));
                perName.put(s.name(), m);
            }
            statistics.put(graph, perName);
        });
        out.put("statistics", statistics);
        return out;
    }

    /** DOT's media type (what Graphviz tools and browsers' viewers expect). */
    static final MimeType GRAPHVIZ = MimeType.valueOf("text/vnd.graphviz");

    /** The most tasks one page of a run's task list holds. */
    static final int MAX_TASKS_PAGE = 10_000;

    /**
     * One retained run.
     *
     * @param runId the run
     * @param format {@code trace} (Chrome Trace Event JSON), {@code dot}, or unset for the profile
     * @param offset the first task of the page of its task list, in the graph's order; 0 when unset
     * @param limit the most tasks in that page, 1 to 10,000; 1,000 when unset
     * @return the profile (with every task's state, dependencies and, for a failed or cancelled
     *     one, its cause, a page at a time), the trace or the DOT text; for an active run, the same
     *     of a snapshot; a 404 saying so when the run is neither kept nor active, a 400 naming the
     *     parameter and what is accepted for a bad one
     */
    @ReadOperation
    public @Nullable Object run(
            @Selector String runId, @Nullable String format, @Nullable String offset, @Nullable String limit) {
        try {
            return run(
                    java.util.Objects.requireNonNull(EndpointProblems.number(
                            "runId",
                            runId,
                            Long.MIN_VALUE,
                            Long.MAX_VALUE,
                            "a run id (a whole number), such as the runId of /actuator/htsprofiler's recentRuns")),
                    format,
                    EndpointProblems.number("offset", offset, 0, Integer.MAX_VALUE, "a whole number of 0 or more"),
                    EndpointProblems.number(
                            "limit", limit, 1, MAX_TASKS_PAGE, "a whole number from 1 to " + MAX_TASKS_PAGE));
        } catch (EndpointProblems.Bad bad) {
            return bad.response();
        }
    }

    private Object run(long runId, @Nullable String format, @Nullable Long offset, @Nullable Long limit) {
        RunProfile p = profile(runId);
        if (p == null) {
            return EndpointProblems.notFound("run " + runId + " is not among the runs the profiler keeps (the last "
                    + scheduler.profiler().recentRuns().size()
                    + " finished ones it kept: see /actuator/htsprofiler), nor active");
        }
        if (format == null) {
            int from = offset == null ? 0 : (int) (long) offset;
            int max = limit == null ? 1000 : (int) (long) limit;
            Map<String, Object> out = run(p);
            List<Map<String, Object>> tasks = new ArrayList<>();
            for (TaskTiming t : p.slowest(20)) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("task", t.taskName());
                m.put("state", t.state().name());
                if (t.device() != null) {
                    m.put("device", t.device().id());
                    m.put("lane", t.lane());
                    m.put("remote", t.remote());
                }
                m.put("millis", millis(t.durationNanos()));
                tasks.add(m);
            }
            out.put("slowestTasks", tasks);
            out.put("taskStates", states(p));
            out.put("taskList", taskPage(p, from, max));
            return out;
        }
        return switch (format.toLowerCase(Locale.ROOT)) {
            // streamed as the client reads it: a large run's trace is not built as one string first
            case "trace" ->
                new WebEndpointResponse<>(
                        new InputStreamResource(p.chromeTraceStream()), MimeTypeUtils.APPLICATION_JSON);
            case "dot" -> new WebEndpointResponse<>(p.toDot(), GRAPHVIZ);
            default ->
                EndpointProblems.badRequest(
                        "format",
                        format,
                        "unknown format '" + format + "'",
                        "trace (Chrome Trace Event JSON), dot (Graphviz), or none (the profile)");
        };
    }

    /** The kept profile of a run, else a snapshot of an active one's, else null. */
    private @Nullable RunProfile profile(long runId) {
        Profiler profiler = scheduler.profiler();
        RunProfile kept = profiler.run(runId).orElse(null);
        if (kept != null) {
            return kept;
        }
        GraphRun active = scheduler.activeRun(runId).orElse(null);
        if (active != null) {
            return active.profile();
        }
        return profiler.run(runId).orElse(null); // it may have ended in between
    }

    /** How many of the run's tasks ended in (or are in) each state. */
    private static Map<String, Integer> states(RunProfile p) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (TaskState s : TaskState.values()) {
            counts.put(s.name(), 0);
        }
        for (TaskTiming t : p.tasks()) {
            counts.merge(t.state().name(), 1, Integer::sum);
        }
        return counts;
    }

    /** Tasks {@code from} to {@code from + max - 1}: every task appears on some page. */
    private Map<String, Object> taskPage(RunProfile p, int from, int max) {
        List<TaskTiming> all = p.tasks();
        GraphTopology topology = p.topology();
        List<Map<String, Object>> page = new ArrayList<>();
        for (int i = from; i < all.size() && i < (long) from + max; i++) {
            TaskTiming t = all.get(i);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("task", t.taskName());
            m.put("state", t.state().name());
            m.put("attempts", t.attempts());
            if (t.device() != null) {
                m.put("device", t.device().id());
                m.put("lane", t.lane());
                m.put("remote", t.remote());
            }
            if (t.startNanos() >= 0) {
                m.put("startMillis", millis(t.startNanos()));
            }
            if (t.ran()) {
                m.put("durationMillis", millis(t.durationNanos()));
            }
            m.put("after", topology.predecessorNames(t.index()));
            if (t.cause() != null) {
                m.put("cause", t.cause());
            }
            if (t.state() == TaskState.FAILED) {
                traces.trace(p.runId(), t.taskName()).ifPresent(trace -> m.put("stackTrace", trace));
            }
            page.add(m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("offset", from);
        out.put("total", all.size());
        out.put("tasks", page);
        return out;
    }

    private static Map<String, Object> run(RunProfile p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("runId", p.runId());
        m.put("graph", p.graphName());
        m.put("status", p.status().name());
        m.put("submitted", p.submitted().toString()); // ISO-8601, as every instant here
        if (p.status().isDone()) {
            m.put("finished", p.submitted().plus(p.makespan()).toString());
        }
        m.put("policy", p.policy());
        m.put("tasks", p.topology().size());
        m.put("makespanMillis", millis(p.makespan()));
        if (p.hasTimings()) {
            m.put("totalWorkMillis", millis(p.totalWork()));
            m.put("criticalPath", p.criticalPath().tasks());
            m.put("criticalPathMillis", millis(p.criticalPath().length()));
            m.put("idealGapRatio", p.idealGapRatio()); // makespan beyond max(work / workers, critical path), any cause
            WorkerTime w = p.workerTime();
            Map<String, Object> time = new LinkedHashMap<>();
            time.put("capacityMillis", millis(w.capacity()));
            time.put("workMillis", millis(w.work()));
            time.put("schedulerDelayMillis", millis(w.schedulerDelay())); // ready tasks waited while a worker idled
            time.put("shapeIdleMillis", millis(w.shapeIdle())); // workers idle with nothing ready
            time.put("schedulerShare", w.schedulerShare());
            time.put("shapeShare", w.shapeShare());
            m.put("workerTime", time);
        }
        return m;
    }

    private static double millis(Duration d) {
        return d.toNanos() / 1e6;
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }
}
