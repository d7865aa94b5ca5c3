package io.hts.autoconfigure.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.hts.engine.observe.Profiler;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskStatistics;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.run.Scheduler;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/htsprofiler}: the profiler's retained runs (makespan, work, critical path,
 * scheduling overhead), the slowest tasks and per-name duration statistics (p50/p90/p99, from
 * HdrHistogram); {@code /actuator/htsprofiler/{runId}} one run's profile, and with
 * {@code ?format=trace} its Chrome Trace Event JSON (opens in Perfetto) or {@code ?format=dot} its
 * graph in DOT. Read-only.
 */
@Endpoint(id = "htsprofiler", defaultAccess = Access.READ_ONLY)
public class HtsProfilerEndpoint {

    private final Scheduler scheduler;

    /**
     * Creates the endpoint.
     *
     * @param scheduler the scheduler whose profiler it serves
     */
    public HtsProfilerEndpoint(Scheduler scheduler) {
        this.scheduler = scheduler;
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
            slowest.add(Map.of("runId", t.runId(), "graph", t.graph(), "task", t.timing().name(), "millis",
                    millis(t.timing().durationNanos())));
        }
        out.put("slowestTasks", slowest);
        Map<String, Object> statistics = new LinkedHashMap<>();
        for (TaskStatistics s : profiler.taskStatistics().values()) {
            statistics.put(s.name(), Map.of("count", s.count(), "meanMillis", millis(s.mean()), "p50Millis",
                    millis(s.p50()), "p90Millis", millis(s.p90()), "p99Millis", millis(s.p99()), "maxMillis",
                    millis(s.max())));
        }
        out.put("statistics", statistics);
        return out;
    }

    /**
     * One retained run.
     *
     * @param runId the run
     * @param format {@code trace} (Chrome Trace Event JSON), {@code dot}, or unset for the profile
     * @return the profile, the trace or the DOT text; {@code null} (404) when the run is not retained
     */
    @ReadOperation
    public @Nullable Object run(@Selector long runId, @Nullable String format) {
        RunProfile p = scheduler.profiler().run(runId).orElse(null);
        if (p == null) {
            return null;
        }
        if (format == null) {
            Map<String, Object> out = run(p);
            List<Map<String, Object>> tasks = new ArrayList<>();
            for (TaskTiming t : p.slowest(20)) {
                tasks.add(Map.of("task", t.name(), "state", t.state().name(), "device",
                        t.device() == null ? "none" : t.device().id(), "lane", t.lane(), "millis",
                        millis(t.durationNanos())));
            }
            out.put("slowestTasks", tasks);
            return out;
        }
        return switch (format.toLowerCase(Locale.ROOT)) {
            case "trace" -> p.toChromeTrace();
            case "dot" -> p.toDot();
            default -> throw new InvalidEndpointRequestException("unknown format '" + format
                    + "'; accepted: trace, dot, or none", "unknown format '" + format + "'");
        };
    }

    private static Map<String, Object> run(RunProfile p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("runId", p.runId());
        m.put("graph", p.graphName());
        m.put("status", p.status().name());
        m.put("policy", p.policy());
        m.put("tasks", p.graph().size());
        m.put("makespanMillis", millis(p.makespan()));
        if (p.hasTimings()) {
            m.put("totalWorkMillis", millis(p.totalWork()));
            m.put("criticalPath", p.criticalPath().tasks());
            m.put("criticalPathMillis", millis(p.criticalPath().length()));
            m.put("schedulingOverhead", p.schedulingOverheadRatio());
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
