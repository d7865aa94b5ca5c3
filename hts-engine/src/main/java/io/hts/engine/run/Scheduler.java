package io.hts.engine.run;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.PoolStats;
import io.hts.engine.exec.ResourceUsage;
import io.hts.engine.exec.internal.ResourceLimiter;
import io.hts.engine.exec.internal.WorkStealingPool;
import io.hts.engine.fault.FaultTolerance;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.internal.CompiledGraph;
import io.hts.engine.observe.Elapsed;
import io.hts.engine.observe.EventLog;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.Profiler;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.observe.internal.EventBus;
import io.hts.engine.policy.CostModel;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.run.internal.SchedulerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * Runs task graphs: validates a graph on first submission, places each ready task on a device
 * through the {@link SchedulingPolicy}, executes CPU tasks on the work-stealing pool and GPU
 * tasks through the GPU backend, retries and times out through Resilience4j, and records events
 * and profiles.
 *
 * <pre>{@code
 * try (Scheduler scheduler = Scheduler.builder().threads(8).build()) {
 *     GraphRun run = scheduler.submit(graph);       // asynchronous
 *     Report report = run.await().result(merge);
 * }
 * }</pre>
 *
 * <p>Thread-safe. Any number of runs, of one graph or many, proceed at once.
 * {@link #shutdown()} stops admitting runs and lets the running ones finish;
 * {@link #shutdownNow()} also cancels them; {@link #close()} shuts down and waits.
 */
public final class Scheduler implements AutoCloseable {

    static final Set<Device> BOTH = Collections.unmodifiableSet(EnumSet.allOf(Device.class));

    private final WorkStealingPool pool;
    private final @Nullable DeviceBackend gpu;
    private final SchedulerThreads threads;
    private final ResourceLimiter resources;
    private final FaultTolerance faults;
    private final EventBus events;
    private final Profiler profiler;
    private final CostModel costModel;

    private final FailureMode defaultFailureMode;
    private final MemoryShortage memoryShortage;
    private final boolean profiling;
    /** What surrounds every body: the MDC when logContext is on, then the builder's task scopes. */
    final TaskScopes scopes;

    private final FailedRunLog failedRuns;
    private final RunAdmission admission;
    private final Map<String, TaskGraph> registered = new ConcurrentHashMap<>();
    private final @Nullable StallWatchdog watchdog;
    private final CurrentPolicy policy;
    private final @Nullable ClusterEngine cluster;
    /** What distributes its graphs' distributed groups (io.hts.engine.run.internal's hooks); null without a cluster. */
    private final @Nullable SchedulerExtension extension;

    Scheduler(SchedulerBuilder b) {
        this.pool = b.pool.build();
        this.gpu = b.gpuBackend;
        this.threads = new SchedulerThreads(pool, gpu);
        this.resources = new ResourceLimiter(b.resources);
        this.faults = b.faultTolerance;
        this.events = new EventBus(b.eventBufferSize, b.eventDetail);
        for (TaskListener l : b.listeners) {
            events.addListener(l);
        }
        this.profiler = new Profiler(b.retainedRuns, b.retainedProfileBytes);
        this.failedRuns = new FailedRunLog(b.failedRunsLoggedPerMinute);
        this.costModel = b.costModel;
        this.policy = new CurrentPolicy(b.policy);
        this.defaultFailureMode = b.failureMode;
        this.memoryShortage = b.memoryShortage;
        this.profiling = b.profiling;
        this.scopes = TaskScopes.of(b.logContext, b.taskScopes);
        this.watchdog = b.stallTimeout != null ? new StallWatchdog(this, b.stallTimeout) : null;
        this.admission = new RunAdmission(pool, this::drain);
        this.cluster = b.cluster;
        this.extension = SchedulerHooks.install(this, b.cluster, b.clusterSettings, admission::shutdown);
        SchedulerHooks.start(extension, admission::shutdown); // last: slices may run from now on
    }

    /** A builder; defaults: one worker per processor, the default policy, fail-fast, profiling on. */
    public static SchedulerBuilder builder() {
        return new SchedulerBuilder();
    }

    /** A scheduler with every default. */
    public static Scheduler create() {
        return builder().build();
    }

    // ================================================================== runs

    /**
     * Starts a run of a graph. The first submission validates and compiles the graph and freezes it.
     *
     * @param graph the graph
     * @return the run, already started
     * @throws GraphValidationException when the graph is not valid (the message names the tasks)
     * @throws RejectedExecutionException when the scheduler is shut down
     */
    public GraphRun submit(TaskGraph graph) {
        return submit(graph, RunOptions.defaults());
    }

    /**
     * Starts a run of a graph with options.
     *
     * @param graph the graph
     * @param options the run's options
     * @return the run, already started
     * @throws GraphValidationException when the graph is not valid
     * @throws RejectedExecutionException when the scheduler is shut down (a task of a run that is
     *     still finishing may still start nested runs: they belong to work already admitted)
     */
    public GraphRun submit(TaskGraph graph, RunOptions options) {
        return start(graph, options, false, -1);
    }

    /** A run owed to active run {@code owedTo} (a slice of it sent back here): admitted after a shutdown too. */
    GraphRun submitOwed(TaskGraph graph, RunOptions options, long owedTo) {
        return start(graph, options, false, owedTo);
    }

    /**
     * Checks that a graph can run on this scheduler, as its first submission would, without
     * starting a run: validates, compiles and freezes it, and makes its plan here (kept for its runs).
     *
     * @param graph the graph
     * @throws GraphValidationException when the graph is not valid, or cannot run on this scheduler
     *     (a GPU-only task and no GPU backend, a resource the scheduler does not declare)
     */
    public void validate(TaskGraph graph) {
        plan(CompiledGraph.of(Objects.requireNonNull(graph, "graph")));
    }

    /** The graph's execution plan on this scheduler, made (and its distributed groups checked) once per graph. */
    ExecutionPlan plan(CompiledGraph compiled) {
        return compiled.bound(
                this,
                ExecutionPlan.class,
                g -> new ExecutionPlan(g, faults, resources, costModel, gpu != null, extension));
    }

    /** Starts a run; {@code callerWaits}: the caller awaits it right after, without a deadline. */
    private GraphRun start(TaskGraph graph, RunOptions options, boolean callerWaits, long owedTo) {
        Objects.requireNonNull(graph, "graph");
        Objects.requireNonNull(options, "options");
        if (owedTo < 0 && !admission.admits()) {
            throw new RejectedExecutionException(
                    "the scheduler is shut down; a run of graph '" + graph.name() + "' was not accepted");
        }
        CompiledGraph compiled = CompiledGraph.of(graph);
        ExecutionPlan plan = plan(compiled);
        FailureMode mode = options.failureMode() != null ? options.failureMode() : defaultFailureMode;
        GraphRun run = admission.admit(graph, owedTo, id -> new GraphRun(this, plan, id, mode, profiling));
        if (events.wants(EventType.RUN_SUBMITTED)) {
            String detail = Elapsed.count(compiled.size(), "task") + ", " + Elapsed.count(compiled.edgeCount(), "edge")
                    + ", " + mode;
            run.recorder.publish(EventType.RUN_SUBMITTED, -1, null, -1, 0, null, null, detail);
        }
        run.start(callerWaits);
        return run;
    }

    /**
     * Runs a graph and waits for it.
     *
     * @param graph the graph
     * @return the finished run
     * @throws GraphRunException when a task failed or the run was cancelled
     */
    public GraphRun execute(TaskGraph graph) {
        return execute(graph, RunOptions.defaults());
    }

    /**
     * Runs a graph with options and waits for it.
     *
     * @param graph the graph
     * @param options the run's options
     * @return the finished run
     * @throws GraphRunException when a task failed or the run was cancelled
     */
    public GraphRun execute(TaskGraph graph, RunOptions options) {
        return start(graph, options, true, -1).await();
    }

    /** Runs not yet finished. */
    public Collection<GraphRun> activeRuns() {
        return admission.active();
    }

    /** The unfinished run of id {@code runId}; empty once it finished, or when there is none. */
    public Optional<GraphRun> activeRun(long runId) {
        return admission.active(runId);
    }

    /** Registers a graph by name, for discovery (the Actuator endpoint lists registered graphs). */
    public void register(TaskGraph graph) {
        registered.put(graph.name(), graph);
    }

    /** Registered graphs by name. */
    public Map<String, TaskGraph> registeredGraphs() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(registered));
    }

    // ================================================================== state

    /** The policy placing tasks that can run on more than one device. */
    public SchedulingPolicy policy() {
        return policy.get().policy();
    }

    /** The policy, read once with whether it is one of HTS's own. */
    ActivePolicy activePolicy() {
        return policy.get();
    }

    /**
     * Switches the policy; tasks placed from now on use it.
     *
     * @param policy the new policy
     */
    public void setPolicy(SchedulingPolicy policy) {
        this.policy.set(policy);
    }

    /** The load and health of every device, as the policy sees it. */
    public SystemStatus systemStatus() {
        return threads.backends().systemStatus(pool);
    }

    /** The CPU pool's counters. */
    public PoolStats poolStats() {
        return pool.stats();
    }

    /** The number of CPU workers. */
    public int parallelism() {
        return pool.parallelism();
    }

    /** The event bus the run layer publishes to. */
    EventBus eventBus() {
        return events;
    }

    /**
     * The recent-events buffer ({@code eventBufferSize}, {@code eventDetail}), read with a cursor.
     *
     * @return the buffer, or empty when its size is 0 or its detail {@link
     *     io.hts.engine.observe.EventDetail#NONE}
     */
    public Optional<EventLog> eventLog() {
        return Optional.ofNullable(events.log());
    }

    /**
     * Subscribes a listener to every task and run event from now on. A listener that throws is
     * isolated: the exception is counted ({@link #listenerFailures()}) and logged, and scheduling
     * goes on.
     *
     * @param listener the listener
     */
    public void addListener(TaskListener listener) {
        events.addListener(listener);
    }

    /**
     * Unsubscribes a listener; it may still get an event being delivered as it is removed.
     *
     * @param listener the listener
     * @return whether it was subscribed
     */
    public boolean removeListener(TaskListener listener) {
        return events.removeListener(listener);
    }

    /** The exceptions listeners have thrown so far. */
    public long listenerFailures() {
        return events.listenerFailures();
    }

    /** Recent run profiles and per-task statistics. */
    public Profiler profiler() {
        return profiler;
    }

    /** The learned task costs. */
    public CostModel costModel() {
        return costModel;
    }

    /** The named resources and their free amounts. */
    public ResourceUsage resources() {
        return resources.view();
    }

    /** How retries and time limits are resolved. */
    public FaultTolerance faultTolerance() {
        return faults;
    }

    /** The GPU backend, if the scheduler has one. */
    public Optional<DeviceBackend> gpu() {
        return Optional.ofNullable(gpu);
    }

    /** Times the policy threw (its tasks then went to the CPU). */
    public long policyFailures() {
        return policy.failures();
    }

    /** The cluster engine distributed groups run on, if the scheduler has one. */
    public Optional<ClusterEngine> cluster() {
        return Optional.ofNullable(cluster);
    }

    /** Whether per-task timings are recorded. */
    public boolean profilingEnabled() {
        return profiling;
    }

    /** The failure mode of runs that do not choose one. */
    public FailureMode defaultFailureMode() {
        return defaultFailureMode;
    }

    /** What dual-bodied GPU tasks do when the GPU memory they declare is not free. */
    public MemoryShortage memoryShortage() {
        return memoryShortage;
    }

    // ================================================================== lifecycle

    /** Stops admitting runs, and slices from other members (published DOWN); running runs finish, then threads end. */
    public void shutdown() {
        admission.shutdown();
        if (extension != null) {
            extension.shutdown();
        }
    }

    /**
     * Stops admitting runs and cancels the running ones (their running bodies are interrupted and
     * the runs finish when those return).
     *
     * @return the runs that were cancelled
     */
    public List<GraphRun> shutdownNow() {
        shutdown();
        List<GraphRun> cancelled = new ArrayList<>();
        for (GraphRun r : admission.active()) {
            if (r.cancel()) {
                cancelled.add(r);
            }
        }
        return cancelled;
    }

    /**
     * Waits for the runs to finish and the threads to end after a shutdown.
     *
     * @param timeout the longest wait
     * @return whether everything ended in time
     * @throws InterruptedException when interrupted while waiting
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (!admission.awaitDrained(timeout.toNanos())) {
            return false;
        }
        return threads.awaitTermination(deadline);
    }

    /** Whether {@link #shutdown()} has been called. */
    public boolean isShutdown() {
        return admission.isShutdown();
    }

    /** Whether every run has finished and every thread has ended. */
    public boolean isTerminated() {
        return admission.isDrained() && threads.isTerminated();
    }

    /**
     * Shuts down and waits for running runs to finish and the threads to end. Called on one of this
     * scheduler's own threads (from a task's body or a listener on a worker or the timer), or from
     * a callback the scheduler runs on any thread (a listener, a {@code whenDone} stage, a
     * release), it cannot wait for the run it is part of: it then shuts down and returns at once,
     * and the scheduler terminates after its last run finishes.
     */
    @Override
    public void close() {
        shutdown();
        if (threads.owns(Thread.currentThread()) || UserCode.running(this)) {
            return; // (a GPU body or completion on the thread that drives the device, too)
        }
        boolean interrupted = false;
        while (true) {
            try {
                if (awaitTermination(Duration.ofDays(365))) {
                    break;
                }
            } catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ================================================================== internal

    WorkStealingPool pool() {
        return pool;
    }

    ScheduledExecutorService timer() {
        return threads.timer();
    }

    @Nullable
    DeviceBackend gpuBackend() {
        return gpu;
    }

    /** A run was cancelled: its tasks queued on device backends may be dropped early. */
    void runCancelled(long runId) {
        threads.backends().runCancelled(runId);
    }

    /** Where runs that did not succeed are logged. */
    FailedRunLog failedRuns() {
        return failedRuns;
    }

    void runFinished(GraphRun run, RunProfile profile) {
        if (profiling) {
            profiler.record(profile);
        }
        admission.finished(run);
    }

    void policyFailed(SchedulingPolicy p, Throwable ex) {
        policy.failed(p, ex);
    }

    /** Called once, by the admission, when no run is active after the shutdown. */
    private void drain() {
        if (watchdog != null) {
            watchdog.stop();
        }
        threads.shutdown();
    }

    @Override
    public String toString() {
        return "Scheduler[" + pool.parallelism() + " CPU workers" + (gpu != null ? ", GPU " + gpu.name() : "")
                + ", policy " + policy().name() + ", " + admission.active().size() + " active runs]";
    }
}
