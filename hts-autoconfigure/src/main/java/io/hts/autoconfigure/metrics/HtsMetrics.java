package io.hts.autoconfigure.metrics;

import io.hts.engine.exec.PoolStats;
import io.hts.engine.graph.Device;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.run.Scheduler;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Micrometer metrics of a {@link Scheduler}:
 * <ul>
 *   <li>{@code hts.runs} (timer; tags graph, outcome): makespan of each finished run;
 *   <li>{@code hts.tasks} (function timer: count and total time; tags device, outcome, and policy, the
 *       one the run was submitted under): the tasks of finished runs that ran, from their profiles
 *       (so only with profiling on and the run's profile kept); no per-task-name tags, which would
 *       not scale with task counts. A run's tasks are added up in one pass over its profile and
 *       reach Micrometer as two numbers, not one timer sample a task (per-name percentiles are the
 *       profiler's);
 *   <li>{@code hts.tasks.active} (gauge): busy CPU workers plus running GPU tasks;
 *   <li>{@code hts.queue.depth} (gauge; tag device): tasks waiting for each device;
 *   <li>{@code hts.executor.steals}, {@code hts.executor.executed} (function counters) and
 *       {@code hts.executor.idle} (gauge: idle workers);
 *   <li>{@code hts.runs.active} (gauge).
 * </ul>
 * Run and task timers are recorded by a listener on run events only, so the engine publishes no
 * per-task events for metrics.
 */
public final class HtsMetrics implements MeterBinder {

    private final Scheduler scheduler;

    /**
     * Creates the binder.
     *
     * @param scheduler the scheduler to observe
     */
    public HtsMetrics(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Scheduler s = scheduler;
        Gauge.builder("hts.runs.active", s, x -> x.activeRuns().size())
                .description("Runs not yet finished")
                .register(registry);
        Gauge.builder("hts.tasks.active", s, HtsMetrics::activeTasks)
                .description("Tasks running on any device")
                .register(registry);
        Gauge.builder(
                        "hts.executor.idle",
                        s,
                        x -> x.poolStats().workers().stream()
                                .filter(w -> !w.active())
                                .count())
                .description("Idle CPU workers")
                .register(registry);
        FunctionCounter.builder("hts.executor.steals", s, x -> x.poolStats().steals())
                .description("Tasks CPU workers stole from one another")
                .register(registry);
        FunctionCounter.builder("hts.executor.executed", s, x -> x.poolStats().executed())
                .description("Tasks the CPU workers ran")
                .register(registry);
        for (Device d : Device.values()) {
            Gauge.builder("hts.queue.depth", s, x -> queued(x, d))
                    .tag("device", d.id())
                    .description("Tasks waiting for the device")
                    .register(registry);
        }
        s.addListener(new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {
                // runs are read whole, below
            }

            @Override
            public void onRunFinished(RunProfile profile) {
                record(registry, profile); // every run, whether or not the profiler keeps it
            }

            @Override
            public boolean wantsRoutineEvents() {
                return false;
            }
        });
    }

    /** One hts.tasks series: its totals, read by its FunctionTimer. */
    private static final class TaskTotals {
        final LongAdder count = new LongAdder();
        final LongAdder nanos = new LongAdder();
    }

    /**
     * Per registry this binder was bound to, then by device, outcome and policy: a handful of
     * series, made on first use (a binder bound to two registries feeds each its own).
     */
    private final Map<MeterRegistry, Map<List<String>, TaskTotals>> taskTotals = new ConcurrentHashMap<>();

    private void record(MeterRegistry registry, RunProfile profile) {
        String outcome = profile.status().name().toLowerCase(Locale.ROOT);
        Timer.builder("hts.runs")
                .tag("graph", profile.graphName())
                .tag("outcome", outcome)
                .description("Makespan of finished runs")
                .register(registry)
                .record(profile.makespan().toNanos(), TimeUnit.NANOSECONDS);
        if (!profile.hasTimings()) {
            return;
        }
        // one pass over the timings: per device and final state, how many ran and for how long
        profile.ranTotals((device, state, count, nanos) -> {
            TaskTotals totals = totals(
                    registry,
                    device == null ? "none" : device.id(),
                    state.name().toLowerCase(Locale.ROOT),
                    profile.policy());
            totals.count.add(count);
            totals.nanos.add(nanos);
        });
    }

    private TaskTotals totals(MeterRegistry registry, String device, String outcome, String policy) {
        Map<List<String>, TaskTotals> ofRegistry = taskTotals.computeIfAbsent(registry, r -> new ConcurrentHashMap<>());
        return ofRegistry.computeIfAbsent(List.of(device, outcome, policy), key -> {
            TaskTotals t = new TaskTotals();
            FunctionTimer.builder("hts.tasks", t, x -> x.count.sum(), x -> x.nanos.sum(), TimeUnit.NANOSECONDS)
                    .tag("device", device)
                    .tag("outcome", outcome)
                    .tag("policy", policy)
                    .description("Tasks of finished runs that ran, and their total duration")
                    .register(registry);
            return t;
        });
    }

    private static double activeTasks(Scheduler s) {
        double active = s.poolStats().workers().stream()
                .filter(PoolStats.WorkerStats::active)
                .count();
        for (DeviceStatus d : s.systemStatus().devices()) {
            if (d.device() != Device.CPU) {
                active += d.running();
            }
        }
        return active;
    }

    private static double queued(Scheduler s, Device device) {
        if (device == Device.CPU) {
            return s.poolStats().queued();
        }
        DeviceStatus d = s.systemStatus().status(device);
        return d == null ? 0 : d.queued();
    }
}
