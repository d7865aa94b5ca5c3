package io.hts.engine.run;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.internal.WorkStealingPool;
import io.hts.engine.fault.FaultTolerance;
import io.hts.engine.graph.Device;
import io.hts.engine.observe.EventDetail;
import io.hts.engine.observe.Profiler;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.policy.CostModel;
import io.hts.engine.policy.DefaultPolicy;
import io.hts.engine.policy.SchedulingPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Builds a {@link Scheduler}: {@code Scheduler.builder().threads(8).policy(p).build()}. The worker
 * pool's options ({@link #threads}, {@link #spinsBeforePark}, {@link #threadNamePrefix}) go straight
 * to the pool's own builder, which checks them and keeps their defaults: one place for each.
 */
public final class SchedulerBuilder {

    final WorkStealingPool.Builder pool = WorkStealingPool.builder();
    SchedulingPolicy policy = new DefaultPolicy();

    @Nullable
    DeviceBackend gpuBackend;

    final Map<String, Long> resources = new LinkedHashMap<>();
    FaultTolerance faultTolerance = FaultTolerance.defaults();
    FailureMode failureMode = FailureMode.FAIL_FAST;
    MemoryShortage memoryShortage = MemoryShortage.WAIT;
    boolean profiling = true;
    boolean logContext;
    final List<io.hts.engine.observe.TaskScope> taskScopes = new ArrayList<>();
    int retainedRuns = 16;
    int failedRunsLoggedPerMinute = 10;
    long retainedProfileBytes = Profiler.DEFAULT_RETAINED_BYTES;
    int eventBufferSize = 4096;
    EventDetail eventDetail = EventDetail.NOTABLE;
    final List<TaskListener> listeners = new ArrayList<>();

    @Nullable
    Duration stallTimeout;

    CostModel costModel = new CostModel();

    @Nullable
    ClusterEngine cluster;

    ClusterSettings clusterSettings = ClusterSettings.defaults();

    SchedulerBuilder() {}

    /**
     * The number of CPU worker threads.
     *
     * @param threads 1 to 65534; the number of available processors by default
     * @return this builder
     */
    public SchedulerBuilder threads(int threads) {
        pool.threads(threads);
        return this;
    }

    /**
     * The policy placing tasks that have bodies for several devices.
     *
     * @param policy the policy; {@link DefaultPolicy} by default
     * @return this builder
     */
    public SchedulerBuilder policy(SchedulingPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
        return this;
    }

    /**
     * The GPU execution backend (from {@code hts-gpu}); the scheduler closes it on shutdown.
     *
     * @param backend the backend, or {@code null} for CPU only
     * @return this builder
     */
    public SchedulerBuilder gpuBackend(@Nullable DeviceBackend backend) {
        if (backend != null && backend.device() != Device.GPU) {
            throw new IllegalArgumentException("the GPU backend serves " + backend.device() + ", not GPU");
        }
        this.gpuBackend = backend;
        return this;
    }

    /**
     * A cluster engine (from {@code hts-cluster}) with the default {@link ClusterSettings}: groups
     * marked {@code distributed()} run in slices across its members, and this scheduler serves the
     * slices other members send from the moment it is built. Every member must register the same
     * graphs ({@link Scheduler#register}). docs/cluster.md.
     *
     * @param engine the engine; the scheduler does not close it
     * @return this builder
     */
    public SchedulerBuilder cluster(ClusterEngine engine) {
        return cluster(engine, ClusterSettings.defaults());
    }

    /**
     * A cluster engine with settings (codec, inline limit, round trip, overhead, slice attempts).
     *
     * @param engine the engine; the scheduler does not close it
     * @param settings how groups are distributed
     * @return this builder
     */
    public SchedulerBuilder cluster(ClusterEngine engine, ClusterSettings settings) {
        this.cluster = Objects.requireNonNull(engine, "engine");
        this.clusterSettings = Objects.requireNonNull(settings, "settings");
        return this;
    }

    /**
     * A named resource tasks can declare amounts of ({@code TaskBuilder.resource}).
     *
     * @param name e.g. {@code io} or {@code gpu-memory}
     * @param capacity the amount available, 0 or more
     * @return this builder
     */
    public SchedulerBuilder resource(String name, long capacity) {
        if (Objects.requireNonNull(name, "name").isBlank()) {
            throw new IllegalArgumentException("a resource needs a name that is not blank (such as \"io\" or"
                    + " \"licence\"), was '" + name + "' with capacity " + capacity);
        }
        if (capacity < 0) {
            throw new IllegalArgumentException(
                    "capacity of resource '" + name + "' must be 0 or more, was " + capacity);
        }
        resources.put(Objects.requireNonNull(name, "name"), capacity);
        return this;
    }

    /**
     * How retries and time limits are resolved (defaults, registries).
     *
     * @param faultTolerance the resolver
     * @return this builder
     */
    public SchedulerBuilder faultTolerance(FaultTolerance faultTolerance) {
        this.faultTolerance = Objects.requireNonNull(faultTolerance, "faultTolerance");
        return this;
    }

    /**
     * What a task with CPU and GPU bodies, placed on the GPU, does when the GPU memory it
     * declares ({@code resource("gpu-memory", bytes)}) is not free: wait for it, or run its
     * CPU body now.
     *
     * @param shortage {@link MemoryShortage#WAIT} by default
     * @return this builder
     */
    public SchedulerBuilder memoryShortage(MemoryShortage shortage) {
        this.memoryShortage = Objects.requireNonNull(shortage, "shortage");
        return this;
    }

    /**
     * The failure mode of runs that do not choose one.
     *
     * @param mode {@link FailureMode#FAIL_FAST} by default
     * @return this builder
     */
    public SchedulerBuilder failureMode(FailureMode mode) {
        this.failureMode = Objects.requireNonNull(mode, "mode");
        return this;
    }

    /**
     * Whether to record per-task timings (one or two clock reads per task, about 20 bytes per task per
     * run). Run profiles, critical paths, traces and per-name statistics need it.
     *
     * @param profiling {@code true} by default
     * @return this builder
     */
    public SchedulerBuilder profiling(boolean profiling) {
        this.profiling = profiling;
        return this;
    }

    /**
     * How many runs that did not succeed are logged a minute, at most: a failed run at WARN (its
     * failed tasks, its cancelled ones and its first cause with the stack trace), a cancelled run at
     * INFO, once each, when it ends (logger {@code io.hts.engine.run.FailedRunLog}). Past the limit
     * runs are counted, and the next line logged says how many were left out.
     *
     * @param perMinute 0 (none logged) or more; 10 by default
     * @return this builder
     */
    public SchedulerBuilder failedRunsLoggedPerMinute(int perMinute) {
        if (perMinute < 0) {
            throw new IllegalArgumentException(
                    "failed runs logged per minute must be 0 (none) or more, was " + perMinute);
        }
        this.failedRunsLoggedPerMinute = perMinute;
        return this;
    }

    /**
     * Adds a scope around every task body, on the thread that runs it (a tracing scope, say; see
     * {@link io.hts.engine.observe.TaskScope}). Scopes open in the order added and close in reverse.
     *
     * @param scope the scope
     * @return this builder
     */
    public SchedulerBuilder taskScope(io.hts.engine.observe.TaskScope scope) {
        taskScopes.add(java.util.Objects.requireNonNull(scope, "scope"));
        return this;
    }

    /**
     * Whether each task's body runs with its run id, graph and task name in the SLF4J MDC (keys
     * {@code hts.run}, {@code hts.graph}, {@code hts.task}; what was there before is given back
     * after the body), so that what bodies log can be correlated. Off by default here (a few
     * thread-local map operations a task); the Spring Boot starter turns it on
     * ({@code hts.logging.mdc}).
     *
     * @param on whether to
     * @return this builder
     */
    public SchedulerBuilder logContext(boolean on) {
        this.logContext = on;
        return this;
    }

    /**
     * How many finished runs' profiles to keep.
     *
     * @param runs 0 or more; 16 by default
     * @return this builder
     */
    public SchedulerBuilder retainedRuns(int runs) {
        if (runs < 0) {
            throw new IllegalArgumentException("retained runs must be 0 or more, was " + runs);
        }
        this.retainedRuns = runs;
        return this;
    }

    /**
     * How much memory the kept profiles may hold together (their timing arrays and their graphs'
     * names and edges, never the graphs' tasks); older profiles are dropped first, and a
     * profile larger than this is not kept.
     *
     * @param bytes 0 or more; 64 MiB by default
     * @return this builder
     */
    public SchedulerBuilder retainedProfileBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("retained profile bytes must be 0 or more, was " + bytes);
        }
        this.retainedProfileBytes = bytes;
        return this;
    }

    /**
     * The size of the recent-events buffer.
     *
     * @param events 0 (no buffer) or more; 4096 by default
     * @return this builder
     */
    public SchedulerBuilder eventBufferSize(int events) {
        if (events < 0) {
            throw new IllegalArgumentException("event buffer size must be 0 or more, was " + events);
        }
        this.eventBufferSize = events;
        return this;
    }

    /**
     * Which events the recent-events buffer keeps.
     *
     * @param detail {@link EventDetail#NOTABLE} by default
     * @return this builder
     */
    public SchedulerBuilder eventDetail(EventDetail detail) {
        this.eventDetail = Objects.requireNonNull(detail, "detail");
        return this;
    }

    /**
     * A listener subscribed from the start.
     *
     * @param listener the listener
     * @return this builder
     */
    public SchedulerBuilder listener(TaskListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        return this;
    }

    /**
     * Logs a diagnosis (at WARN) and publishes {@code RUN_STALLED} when a run finishes no task
     * for this long.
     *
     * @param timeout the stall time, at least 10 ms; {@code null} (the default) for no watchdog
     * @return this builder
     */
    public SchedulerBuilder stallTimeout(@Nullable Duration timeout) {
        if (timeout != null && timeout.compareTo(Duration.ofMillis(10)) < 0) {
            throw new IllegalArgumentException("stall timeout must be at least 10 ms, was " + timeout);
        }
        this.stallTimeout = timeout;
        return this;
    }

    /**
     * How many times an idle worker rescans the queues before parking.
     *
     * @param spins 0 or more; 256 by default
     * @return this builder
     */
    public SchedulerBuilder spinsBeforePark(int spins) {
        pool.spinsBeforePark(spins);
        return this;
    }

    /**
     * The prefix of the scheduler's thread names.
     *
     * @param prefix {@code hts-worker-} by default
     * @return this builder
     */
    public SchedulerBuilder threadNamePrefix(String prefix) {
        pool.threadNamePrefix(prefix);
        return this;
    }

    /**
     * The learned cost model (share one between schedulers to share what is learned).
     *
     * @param model the model
     * @return this builder
     */
    public SchedulerBuilder costModel(CostModel model) {
        this.costModel = Objects.requireNonNull(model, "model");
        return this;
    }

    /** Starts the scheduler's threads. */
    public Scheduler build() {
        return new Scheduler(this);
    }
}
