package io.hts.engine.run;

import io.hts.engine.exec.internal.ResourceDemand;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.Elapsed;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a run's {@link Diagnosis}: what every unfinished task does or waits for. Reads the run's
 * states without changing anything; a snapshot, consistent per task, not across tasks.
 */
final class RunDiagnostics {

    private RunDiagnostics() {}

    static Diagnosis diagnose(GraphRun run) {
        long now = System.nanoTime();
        GraphTopology topology = run.topology;
        DependencyManager deps = run.deps;
        Map<TaskState, Integer> counts = new LinkedHashMap<>();
        for (TaskState s : TaskState.values()) {
            counts.put(s, 0);
        }
        Map<Integer, Integer> workers = new LinkedHashMap<>();
        run.pool.forEachRunning(t -> {
            if (t instanceof TaskExecution e && e.run == run && e.bodyRunning()) {
                workers.put(e.index, e.lane);
            }
        });
        List<Diagnosis.Waiting> waiting = new ArrayList<>();
        for (int i = 0; i < topology.size(); i++) {
            TaskState s = deps.observed(i); // a queued continuation counts its dependency only as it starts: READY
            counts.merge(s, 1, Integer::sum);
            if (s.isTerminal()) {
                continue;
            }
            List<String> on = new ArrayList<>();
            String why;
            switch (s) {
                case CREATED -> {
                    for (int k = topology.predecessorStart(i); k < topology.predecessorEnd(i); k++) {
                        int p = topology.predecessor(k);
                        TaskState ps = deps.state(p);
                        if (ps != TaskState.SUCCEEDED) {
                            on.add(topology.name(p) + " (" + ps + ")");
                        }
                    }
                    why = "waits for " + deps.remaining(i) + " of " + topology.inDegree(i) + " dependencies";
                }
                case READY -> {
                    ResourceDemand d = run.plan.demand(i);
                    why = d != null
                            ? "ready; needs resources " + d + " (free: " + Placement.free(d) + ") or a free "
                                    + "device slot (queued on CPU: " + run.pool.queuedTasks() + ")"
                            : "ready; queued for a device (queued on CPU: " + run.pool.queuedTasks() + ")";
                }
                case RUNNING -> {
                    long started = run.recorder.startOf(i);
                    Integer worker = workers.get(i);
                    why = "running" + (started != 0 ? " for " + Elapsed.of(Duration.ofNanos(now - started)) : "")
                            + (worker != null ? " on CPU worker " + worker : "");
                }
                case RETRYING ->
                    why = "failed attempt " + run.recorder.attemptsOf(i) + "; waiting for the retry backoff";
                default -> why = s.toString();
            }
            waiting.add(new Diagnosis.Waiting(topology.name(i), s, List.copyOf(on), why));
        }
        return new Diagnosis(
                run.runId(),
                topology.name(),
                run.status(),
                Duration.ofNanos(now - run.recorder.submitNanos),
                counts,
                waiting,
                run.abandoned());
    }
}
