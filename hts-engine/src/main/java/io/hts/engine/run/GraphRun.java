package io.hts.engine.run;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.hts.engine.exec.BatchedCount;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.exec.PoolTask;
import io.hts.engine.exec.ResourceDemand;
import io.hts.engine.exec.ResourceLimiter;
import io.hts.engine.exec.WorkStealingPool;
import io.hts.engine.exec.Worker;
import io.hts.engine.graph.CompiledGraph;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Releasable;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.DeviceDecision;
import io.hts.engine.observe.EventBus;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.policy.CostModel;
import io.hts.engine.policy.ReadyOrder;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;
import org.jspecify.annotations.Nullable;

/**
 * One run of a graph: its own dependency counters, states and results over the graph's shared
 * compiled form, so many runs of one graph proceed at once without touching each other.
 *
 * <p>Obtained from {@link Scheduler#submit}. Wait with {@link #await()} (or compose
 * {@link #future()}), then read {@link #result(Task)} / {@link #results(TaskGroup)}. While it runs:
 * {@link #state(Task)}, {@link #cancel()}, {@link #cancel(Task)}, {@link #cancel(TaskGroup)},
 * {@link #diagnose()} (what every unfinished task waits on), {@link #profile()}.
 */
public final class GraphRun {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(GraphRun.class);

    private static final int MAX_EVENTS_PER_SWEEP = 1000;

    final CompiledGraph graph;
    private final Scheduler scheduler;
    private final ExecutionPlan plan;
    private final long id;
    private final FailureMode failureMode;
    private final DependencyManager deps;
    private final Object[] results;
    private final long @Nullable [] start;
    private final long @Nullable [] end;
    private final byte @Nullable [] devices;
    private final int @Nullable [] lanes;
    private final int @Nullable [] attempts;
    private final boolean clock;
    private final AtomicInteger pending;
    /** Per chained task (by slot), its predecessors whose work is not yet enqueued on the device. */
    private final @Nullable AtomicIntegerArray notEnqueued;
    /** Per task (by slot), its device attempt once enqueued, for chained successors to follow. */
    private final @Nullable TaskExecution @Nullable [] onDevice;
    /** Per task (by slot), its successors that have not succeeded yet; only for graphs with GPU bodies. */
    private final @Nullable AtomicIntegerArray consumersLeft;
    private final ConcurrentLinkedQueue<TaskFailure> failures = new ConcurrentLinkedQueue<>();
    private final CompletableFuture<GraphRun> future = new CompletableFuture<>();
    private final EventBus bus;
    private final WorkStealingPool pool;
    private final long submitNanos;
    private final Instant submitted;
    private final long stealsAtStart;
    private final long idleSpinsAtStart;
    private final Set<TaskExecution> abandoned = ConcurrentHashMap.newKeySet();
    private final Map<Integer, Retry.AsyncContext<Object>> retryContexts = new ConcurrentHashMap<>();
    private final Set<Integer> cancelledTasks = ConcurrentHashMap.newKeySet();
    private final Map<Integer, CompletableFuture<Object>> watchers = new ConcurrentHashMap<>();
    /** Finished tasks counted by workers in batches, then subtracted from {@code pending}. */
    private final BatchedCount finishedOnWorkers = this::terminated;
    private volatile boolean hasWatchers;
    private volatile boolean anyTaskCancel;
    private volatile boolean stopping;
    private volatile boolean cancelRequested;
    private volatile boolean anyCancelled;
    private volatile RunStatus status = RunStatus.RUNNING;
    private volatile long finishNanos = -1;
    private volatile @Nullable RunProfile finalProfile;

    GraphRun(Scheduler scheduler, ExecutionPlan plan, long id, FailureMode failureMode, boolean profiling) {
        this.scheduler = scheduler;
        this.plan = plan;
        this.graph = plan.graph;
        this.id = id;
        this.failureMode = failureMode;
        int n = graph.size();
        this.deps = new DependencyManager(graph);
        int slots = graph.slots();
        this.results = new Object[slots];
        this.start = profiling ? new long[slots] : null;
        this.end = profiling ? new long[slots] : null;
        this.devices = profiling ? new byte[slots] : null;
        this.lanes = profiling ? new int[slots] : null;
        this.attempts = plan.anyRetry ? new int[slots] : null;
        this.clock = profiling || plan.costCells != null;
        this.pending = new AtomicInteger(n);
        if (plan.anyChained) {
            AtomicIntegerArray waiting = new AtomicIntegerArray(slots);
            for (int i = 0; i < n; i++) {
                if (plan.has(i, ExecutionPlan.CHAINED)) {
                    waiting.set(graph.slot(i), graph.inDegree(i));
                }
            }
            this.notEnqueued = waiting;
            this.onDevice = new TaskExecution[slots];
        }
        else {
            this.notEnqueued = null;
            this.onDevice = null;
        }
        if (graph.hasGpuBodies()) {
            AtomicIntegerArray left = new AtomicIntegerArray(slots);
            for (int i = 0; i < n; i++) {
                left.set(graph.slot(i), graph.successorEnd(i) - graph.successorStart(i));
            }
            this.consumersLeft = left;
        }
        else {
            this.consumersLeft = null;
        }
        this.bus = scheduler.events();
        this.pool = scheduler.pool();
        this.submitted = Instant.now();
        this.submitNanos = System.nanoTime();
        this.stealsAtStart = scheduler.totalSteals();
        this.idleSpinsAtStart = scheduler.totalIdleSpins();
    }

    // ================================================================== public API

    /** The run's id, unique within its scheduler. */
    public long id() {
        return id;
    }

    /** The graph being run. */
    public TaskGraph graph() {
        return graph.graph();
    }

    /** The run's status now. */
    public RunStatus status() {
        return status;
    }

    /** Whether the run has finished. */
    public boolean isDone() {
        return status.isDone();
    }

    /** What the run does when a task fails. */
    public FailureMode failureMode() {
        return failureMode;
    }

    /** When the run was submitted. */
    public Instant submitted() {
        return submitted;
    }

    /** Tasks not yet in a final state. */
    public int pendingTasks() {
        return pending.get();
    }

    /**
     * Completes with this run when every task succeeded, exceptionally with a
     * {@link GraphRunException} when the run failed or was cancelled.
     */
    public CompletableFuture<GraphRun> future() {
        return future.thenApply(r -> r);
    }

    /**
     * Waits for the run to finish.
     *
     * @return this run, when every task succeeded
     * @throws GraphRunException when a task failed or the run was cancelled (the message names the
     *     failed tasks, the cause is the first failure)
     */
    public GraphRun await() {
        try {
            return future.join();
        }
        catch (CompletionException ex) {
            throw rethrow(ex.getCause());
        }
    }

    /**
     * Waits for the run to finish, at most {@code timeout}.
     *
     * @param timeout the longest wait
     * @return this run, when every task succeeded
     * @throws TimeoutException when the run is still going after {@code timeout}
     * @throws InterruptedException when interrupted while waiting
     * @throws GraphRunException when a task failed or the run was cancelled
     */
    public GraphRun await(Duration timeout) throws TimeoutException, InterruptedException {
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            throw rethrow(ex.getCause());
        }
        catch (TimeoutException ex) {
            TimeoutException t = new TimeoutException("run " + id + " of graph '" + graph.name()
                    + "' did not finish within " + timeout + "; " + pending.get() + " tasks unfinished");
            t.initCause(ex);
            throw t;
        }
    }

    /**
     * The state of a task in this run.
     *
     * @param task a task of this run's graph
     * @return its state
     */
    public TaskState state(Task<?> task) {
        return deps.state(indexOf(task));
    }

    /** Every task's state, by name, in graph order. */
    public Map<String, TaskState> states() {
        Map<String, TaskState> out = new LinkedHashMap<>();
        for (int i = 0; i < graph.size(); i++) {
            out.put(graph.name(i), deps.state(i));
        }
        return out;
    }

    /**
     * The result of a task that succeeded.
     *
     * @param task a task of this run's graph
     * @param <T> its result type
     * @return its result
     * @throws IllegalStateException when the task has not succeeded (the message says its state and cause)
     */
    @SuppressWarnings("unchecked")
    public <T extends @Nullable Object> T result(Task<T> task) {
        int i = indexOf(task);
        TaskState s = deps.state(i);
        if (s != TaskState.SUCCEEDED) {
            Throwable cause = errorOf(i);
            throw new IllegalStateException("task '" + task.name() + "' of run " + id + " has no result: it is " + s
                    + (cause != null ? " (" + cause + ")" : ""), cause);
        }
        return (T) results[graph.slot(i)];
    }

    /**
     * The results of a group's members, in index order.
     *
     * @param group a group of this run's graph
     * @param <T> the members' result type
     * @return the results
     * @throws IllegalStateException when a member has not succeeded
     */
    public <T extends @Nullable Object> List<T> results(TaskGroup<T> group) {
        List<T> out = new ArrayList<>(group.size());
        for (Task<T> t : group.members()) {
            out.add(result(t));
        }
        return out;
    }

    /**
     * Why a task failed or was cancelled.
     *
     * @param task a task of this run's graph
     * @return the failure, when the task FAILED or was CANCELLED
     */
    public Optional<Throwable> error(Task<?> task) {
        return Optional.ofNullable(errorOf(indexOf(task)));
    }

    /** The tasks that failed for good, first failure first. */
    public List<TaskFailure> failures() {
        return List.copyOf(failures);
    }

    /** Tasks whose time limit passed while their body has not returned yet. */
    public List<String> abandoned() {
        List<String> out = new ArrayList<>();
        for (TaskExecution e : abandoned) {
            out.add(graph.name(e.index));
        }
        Collections.sort(out);
        return out;
    }

    /**
     * Cancels the run: nothing new starts, running bodies see {@code ctx.isCancelled()} and an
     * interrupt, and the run finishes when they return, with every task's final state recorded.
     *
     * @return whether this call cancelled a running run
     */
    public boolean cancel() {
        synchronized (this) {
            if (status.isDone() || cancelRequested) {
                return false;
            }
            cancelRequested = true;
        }
        int count = stop(new TaskCancelledException("run " + id + " of graph '" + graph.name() + "' was cancelled"));
        pool.forEachRunning(t -> {
            if (t instanceof TaskExecution e && e.run == this) {
                e.interrupt();
            }
        });
        for (DeviceBackend b : scheduler.backends()) {
            b.onRunCancelled(id);
        }
        terminated(count);
        return true;
    }

    /**
     * Cancels one task and its descendants. A running task is interrupted and recorded as
     * cancelled when its body returns. Other branches go on.
     *
     * @param task a task of this run's graph
     * @return whether the task was not yet finished
     */
    public boolean cancel(Task<?> task) {
        return cancelTask(indexOf(task), new TaskCancelledException("task '" + task.name() + "' was cancelled"));
    }

    /**
     * Cancels every member of a group and their descendants.
     *
     * @param group a group of this run's graph
     * @return whether any member was not yet finished
     */
    public boolean cancel(TaskGroup<?> group) {
        TaskCancelledException cause = new TaskCancelledException(group + " was cancelled");
        boolean any = false;
        for (Task<?> t : group.members()) {
            any |= cancelTask(indexOf(t), cause);
        }
        return any;
    }

    /**
     * Completes when a task reaches a final state: with its result when it succeeded,
     * exceptionally otherwise.
     *
     * @param task a task of this run's graph
     * @param <T> its result type
     * @return the future
     */
    @SuppressWarnings("unchecked")
    public <T extends @Nullable Object> CompletableFuture<T> whenDone(Task<T> task) {
        int i = indexOf(task);
        CompletableFuture<Object> f = watchers.computeIfAbsent(i, k -> new CompletableFuture<>());
        hasWatchers = true;
        completeWatcherIfDone(i);
        return (CompletableFuture<T>) (CompletableFuture<?>) f.thenApply(x -> x);
    }

    /**
     * Completes when every member of a group has succeeded (results in index order), or
     * exceptionally as soon as one has not.
     *
     * @param group a group of this run's graph
     * @param <T> the members' result type
     * @return the future
     */
    public <T extends @Nullable Object> CompletableFuture<List<T>> whenDone(TaskGroup<T> group) {
        List<CompletableFuture<T>> parts = new ArrayList<>(group.size());
        for (Task<T> t : group.members()) {
            parts.add(whenDone(t));
        }
        CompletableFuture<List<T>> all = new CompletableFuture<>();
        CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).whenComplete((v, ex) -> {
            if (ex != null) {
                all.completeExceptionally(ex instanceof CompletionException c && c.getCause() != null ? c.getCause() : ex);
            }
            else {
                List<T> out = new ArrayList<>(parts.size());
                for (CompletableFuture<T> p : parts) {
                    out.add(p.join());
                }
                all.complete(out);
            }
        });
        for (CompletableFuture<T> p : parts) {
            p.whenComplete((v, ex) -> {
                if (ex != null) {
                    all.completeExceptionally(ex);
                }
            });
        }
        return all;
    }

    /**
     * The run's profile: the final one once the run has finished, a snapshot before.
     *
     * @return the profile
     */
    public RunProfile profile() {
        RunProfile p = finalProfile;
        return p != null ? p : buildProfile(RunStatus.RUNNING, -1);
    }

    /**
     * What every unfinished task waits on: the seed's answer to "the program hangs".
     *
     * @return the diagnosis
     */
    public Diagnosis diagnose() {
        long now = System.nanoTime();
        Map<TaskState, Integer> counts = new LinkedHashMap<>();
        for (TaskState s : TaskState.values()) {
            counts.put(s, 0);
        }
        List<Diagnosis.Waiting> waiting = new ArrayList<>();
        Map<Integer, TaskExecution> running = new ConcurrentHashMap<>();
        pool.forEachRunning(t -> {
            if (t instanceof TaskExecution e && e.run == this) {
                running.put(e.index, e);
            }
        });
        for (int i = 0; i < graph.size(); i++) {
            TaskState s = deps.state(i);
            counts.merge(s, 1, Integer::sum);
            if (s.isTerminal()) {
                continue;
            }
            List<String> on = new ArrayList<>();
            String why;
            switch (s) {
                case CREATED -> {
                    for (int k = graph.predecessorStart(i); k < graph.predecessorEnd(i); k++) {
                        int p = graph.predecessor(k);
                        TaskState ps = deps.state(p);
                        if (ps != TaskState.SUCCEEDED) {
                            on.add(graph.name(p) + " (" + ps + ")");
                        }
                    }
                    why = "waits for " + deps.remaining(i) + " of " + graph.inDegree(i) + " dependencies";
                }
                case READY -> {
                    ResourceDemand d = plan.demand(i);
                    why = d != null ? "ready; needs resources " + d + " (free: " + freeOf(d) + ") or a free "
                            + "device slot (queued on CPU: " + pool.queuedTasks() + ")"
                            : "ready; queued for a device (queued on CPU: " + pool.queuedTasks() + ")";
                }
                case RUNNING -> {
                    long since = start != null && start[graph.slot(i)] != 0 ? now - start[graph.slot(i)] : -1;
                    TaskExecution e = running.get(i);
                    why = "running" + (since >= 0 ? " for " + Duration.ofNanos(since) : "")
                            + (e != null ? " on CPU worker " + e.lane : "");
                }
                case RETRYING -> why = "failed attempt " + attemptsOf(i) + "; waiting for the retry backoff";
                default -> why = s.toString();
            }
            waiting.add(new Diagnosis.Waiting(graph.name(i), s, List.copyOf(on), why));
        }
        return new Diagnosis(id, graph.name(), status, Duration.ofNanos(now - submitNanos), counts, waiting,
                abandoned());
    }

    @Override
    public String toString() {
        return "run " + id + " of graph '" + graph.name() + "' (" + status + ", " + pending.get() + " of "
                + graph.size() + " tasks unfinished)";
    }

    // ================================================================== starting

    /** Makes the roots ready. Called once by the scheduler after registering the run. */
    void start() {
        int roots = graph.rootCount();
        if (graph.size() == 0) {
            finish();
            return;
        }
        if (roots <= 64) {
            for (int k = 0; k < roots; k++) {
                PoolTask t = rootReady(graph.root(k));
                if (t != null) {
                    pool.submit(t);
                }
            }
        }
        else {
            pool.submit(new RootSeeder(this, 0, roots));
        }
    }

    @Nullable PoolTask rootReady(int i) {
        return becomeReady(i);
    }

    // ================================================================== dispatching

    /** A root: CREATED to READY, then to a device. */
    private @Nullable PoolTask becomeReady(int i) {
        if (!deps.transition(i, TaskState.CREATED, TaskState.READY)) {
            return null;
        }
        return ready(i);
    }

    /** A task just made READY (by its last dependency, or as a root) goes to a device. */
    private @Nullable PoolTask ready(int i) {
        if (bus.wantsRoutine()) {
            publish(EventType.TASK_READY, i, null, -1, 1, null, null, null);
        }
        return dispatch(new TaskExecution(this, i, 1));
    }

    /**
     * Sends a READY attempt towards a device: decides the device, takes resources (or queues for
     * them), and routes.
     *
     * @return the attempt when the caller should run it on its CPU worker (or submit it), else null
     */
    private @Nullable PoolTask dispatch(TaskExecution e) {
        int i = e.index;
        Device device = chooseDevice(i);
        if (device == null) {
            return null;
        }
        ResourceDemand demand = plan.demand(i);
        if (demand != null && device == Device.GPU && scheduler.memoryShortage() == MemoryShortage.RUN_ON_CPU
                && plan.has(i, ExecutionPlan.CPU) && demand.amount(ResourceLimiter.GPU_MEMORY) > 0) {
            if (demand.limiter().tryAcquire(demand)) {
                e.held = demand;
                return route(e, device);
            }
            publish(EventType.TASK_PLACED, i, Device.CPU, -1, e.attempt, null, null, "the "
                    + demand.amount(ResourceLimiter.GPU_MEMORY) + " bytes of GPU memory it declares are not free ("
                    + freeOf(demand) + "); running its CPU body instead of waiting");
            device = Device.CPU;
            demand = plan.cpuDemand(i);
        }
        if (demand != null) {
            Device d = device;
            ResourceDemand taken = demand;
            if (demand.limiter().acquireOrWait(demand, () -> {
                e.held = taken;
                PoolTask t = route(e, d);
                if (t != null) {
                    pool.submit(t);
                }
            }) != null) {
                publish(EventType.TASK_WAITING, i, device, -1, e.attempt, null, null,
                        "waiting for resources " + demand + " (free: " + freeOf(demand) + ")");
                return null;
            }
            e.held = demand;
        }
        return route(e, device);
    }

    private @Nullable PoolTask route(TaskExecution e, Device device) {
        e.device = device;
        if (device == Device.GPU) {
            DeviceBackend gpu = scheduler.gpuBackend();
            if (gpu == null) {
                failBeforeStart(e, new NoDeviceException("task '" + graph.name(e.index) + "' was placed on the GPU"
                        + " but the scheduler has no GPU backend"));
                return null;
            }
            try {
                gpu.dispatch(e);
            }
            catch (RuntimeException ex) { // a backend must not throw; if it does, the attempt fails, not the run's bookkeeping
                failBeforeStart(e, ex);
            }
            return null;
        }
        int i = e.index;
        SchedulingPolicy policy = scheduler.policy();
        if (plan.has(i, ExecutionPlan.URGENT) || policy.readyOrder() == ReadyOrder.SHORTEST_FIRST) {
            long cost = plan.estimate(i, Device.CPU);
            pool.submitPriority(e, graph.task(i).priority(), cost < 0 ? Long.MAX_VALUE : cost);
            return null;
        }
        return e;
    }

    /** The device for a ready task; consults the policy only when there is a real choice. */
    private @Nullable Device chooseDevice(int i) {
        boolean cpu = plan.has(i, ExecutionPlan.CPU);
        boolean gpu = plan.has(i, ExecutionPlan.GPU);
        if (cpu && !gpu) {
            return Device.CPU;
        }
        SystemStatus status = scheduler.systemStatus();
        boolean gpuUsable = gpu && status.usable(Device.GPU);
        if (!cpu) {
            if (gpuUsable) {
                return Device.GPU;
            }
            var s = status.status(Device.GPU);
            failNotStarted(i, new NoDeviceException("task '" + graph.name(i) + "' has only a GPU body and the GPU"
                    + " backend is " + (s == null ? "absent" : s.health() + ": " + s.detail())));
            return null;
        }
        if (!gpuUsable) {
            return Device.CPU;
        }
        SchedulingPolicy policy = scheduler.policy();
        Task<?> task = graph.task(i);
        TaskInfo info = new TaskInfo(task.name(), task.statisticsName(), Scheduler.BOTH, task.priority(),
                plan.estimate(i, Device.CPU), plan.estimate(i, Device.GPU));
        Device chosen;
        try {
            chosen = policy.selectDevice(info, status);
        }
        catch (RuntimeException ex) {
            scheduler.policyFailed(policy, ex);
            chosen = null;
        }
        Device used = chosen == Device.GPU || chosen == Device.CPU ? chosen : Device.CPU;
        if (bus.wants(EventType.TASK_PLACED)) {
            publish(EventType.TASK_PLACED, i, used, -1, 0, null,
                    new DeviceDecision(policy.name(), info, status, chosen == null ? used : chosen, used), null);
        }
        return used;
    }

    // ================================================================== CPU execution

    /** Runs an attempt on a CPU worker; returns the continuation (a successor to run next). */
    @Nullable PoolTask executeOnCpu(TaskExecution e, Worker w) {
        int i = e.index;
        w.flushCountsUnless(finishedOnWorkers);
        e.device = Device.CPU;
        if (!beginAttempt(e, w.index(), w.handOffNanos())) {
            return null;
        }
        @SuppressWarnings("unchecked")
        TaskBody<Object> body = (TaskBody<Object>) graph.task(i).cpuBody();
        Object result = null;
        Throwable error = null;
        if (body != null) {
            e.beginBody(w);
            if (plan.has(i, ExecutionPlan.TIMED)) {
                armTimeLimit(e);
            }
            try {
                result = body.run(e);
            }
            catch (Throwable ex) {
                error = ex;
            }
            e.endBody();
        }
        long t1 = clock ? System.nanoTime() : 0;
        w.taskEndedAt(t1);
        return attemptEnded(e, result, error, t1, w);
    }

    /** Common end of an attempt on any device. */
    private @Nullable PoolTask attemptEnded(TaskExecution e, @Nullable Object result, @Nullable Throwable error,
            long t1, @Nullable Worker w) {
        int i = e.index;
        CompletableFuture<Object> limit = e.attemptFuture;
        if (limit != null) {
            if (!e.claimCompletion()) {
                if (result instanceof Releasable r) {
                    r.release(); // the timed-out attempt's result reaches nobody
                }
                abandonedReturned(e, error);
                return null;
            }
            if (error == null) {
                limit.complete(result);
            }
            else {
                limit.completeExceptionally(error);
            }
        }
        if (end != null) {
            end[graph.slot(i)] = t1;
        }
        CostModel.Cell cell = plan.costCell(i);
        if (cell != null && error == null) {
            cell.record(e.device, t1 - e.startNanos);
        }
        releaseResources(e);
        if (error == null && !(anyTaskCancel && cancelledTasks.contains(i))) {
            return succeeded(e, result, w);
        }
        attemptFailed(e, error != null ? error : new TaskCancelledException("task '" + graph.name(i)
                + "' was cancelled while running"));
        return null;
    }

    private @Nullable PoolTask succeeded(TaskExecution e, @Nullable Object result, @Nullable Worker w) {
        int i = e.index;
        results[graph.slot(i)] = result;
        deps.set(i, TaskState.SUCCEEDED);
        if (plan.anyRetry) {
            Retry.AsyncContext<Object> ctx = retryContexts.remove(i);
            if (ctx != null) {
                ctx.onComplete();
            }
        }
        if (bus.wantsRoutine()) {
            publish(EventType.TASK_SUCCEEDED, i, e.device, e.lane, e.attempt, null, null, null);
        }
        if (hasWatchers) {
            completeWatcherIfDone(i);
        }
        PoolTask next = null;
        for (int k = graph.successorStart(i), stop = graph.successorEnd(i); k < stop; k++) {
            int s = graph.successor(k);
            if (deps.dependencyDone(s)) {
                PoolTask t = ready(s);
                if (t != null) {
                    if (next == null && w != null) {
                        next = t;
                    }
                    else if (w != null) {
                        w.push(t);
                    }
                    else {
                        pool.submit(t);
                    }
                }
            }
        }
        if (consumersLeft != null) {
            consumed(i);
        }
        if (w != null) {
            w.countLocally(finishedOnWorkers);
        }
        else {
            terminated(1);
        }
        return next;
    }

    /** Task {@code i} succeeded: a predecessor whose consumers have all succeeded is released. */
    private void consumed(int i) {
        AtomicIntegerArray left = consumersLeft;
        for (int k = graph.predecessorStart(i), stop = graph.predecessorEnd(i); k < stop; k++) {
            int p = graph.predecessor(k);
            if (left.decrementAndGet(graph.slot(p)) == 0) {
                release(p);
            }
        }
    }

    private void release(int i) {
        if (results[graph.slot(i)] instanceof Releasable r) {
            try {
                r.release();
            }
            catch (RuntimeException ex) {
                log.warn("releasing the result of task '{}' in run {} failed", graph.name(i), id, ex);
            }
        }
    }

    /** At the end of a run: release what failed or cancelled consumers left, unless an abandoned body may use it. */
    private void releaseLeftovers() {
        AtomicIntegerArray left = consumersLeft;
        if (left == null) {
            return;
        }
        java.util.Set<Integer> inUse = new java.util.HashSet<>();
        for (TaskExecution e : abandoned) {
            for (int k = graph.predecessorStart(e.index), stop = graph.predecessorEnd(e.index); k < stop; k++) {
                inUse.add(graph.predecessor(k));
            }
        }
        for (int i = 0; i < graph.size(); i++) {
            if (left.get(graph.slot(i)) > 0 && !inUse.contains(i)) {
                release(i);
            }
        }
    }

    /** An attempt failed: retry after the backoff, or fail (or record the cancellation). */
    private void attemptFailed(TaskExecution e, Throwable error) {
        int i = e.index;
        boolean cancelled = cancelRequested || (anyTaskCancel && cancelledTasks.contains(i))
                || (stopping && isInterruption(error));
        if (!cancelled && !stopping) {
            Retry retry = plan.retry(i, e.device);
            if (retry != null) {
                Retry.AsyncContext<Object> ctx = retryContexts.computeIfAbsent(i, k -> retry.asyncContext());
                long delay = ctx.onError(error);
                if (delay >= 0) {
                    deps.set(i, TaskState.RETRYING);
                    publish(EventType.TASK_RETRYING, i, e.device, e.lane, e.attempt, error, null,
                            "attempt " + (e.attempt + 1) + " in " + delay + " ms");
                    int next = e.attempt + 1;
                    scheduler.timer().schedule(() -> retryNow(i, next), delay, TimeUnit.MILLISECONDS);
                    return;
                }
                retryContexts.remove(i);
            }
        }
        if (cancelled) {
            results[graph.slot(i)] = new Outcome(error);
            deps.set(i, TaskState.CANCELLED);
            anyCancelled = true;
            cancelChained(i, error);
            publish(EventType.TASK_CANCELLED, i, e.device, e.lane, e.attempt, error, null, null);
            if (hasWatchers) {
                completeWatcherIfDone(i);
            }
            terminated(1 + cancelDescendants(i, error));
            return;
        }
        results[graph.slot(i)] = new Outcome(error);
        if (failureMode == FailureMode.FAIL_FAST) {
            stopping = true; // from this moment nothing new starts, before anyone hears of the failure
        }
        deps.set(i, TaskState.FAILED);
        cancelChained(i, error);
        failures.add(new TaskFailure(graph.name(i), i, error, e.attempt));
        publish(EventType.TASK_FAILED, i, e.device, e.lane, e.attempt, error, null, null);
        if (hasWatchers) {
            completeWatcherIfDone(i);
        }
        TaskCancelledException cause = new TaskCancelledException(
                "cancelled because task '" + graph.name(i) + "' failed", error);
        int count = 1 + cancelDescendants(i, cause);
        if (failureMode == FailureMode.FAIL_FAST) {
            count += stop(cause);
        }
        terminated(count);
    }

    private void retryNow(int i, int attempt) {
        try {
            if (!deps.transition(i, TaskState.RETRYING, TaskState.READY)) {
                return;
            }
            if (bus.wantsRoutine()) {
                publish(EventType.TASK_READY, i, null, -1, attempt, null, null, null);
            }
            PoolTask t = dispatch(new TaskExecution(this, i, attempt));
            if (t != null) {
                pool.submit(t);
            }
        }
        catch (RuntimeException ex) {
            failNotStarted(i, ex);
        }
    }

    // ================================================================== device execution

    boolean startOnDevice(TaskExecution e, int lane) {
        if (!beginAttempt(e, lane, 0)) {
            return false;
        }
        if (plan.has(e.index, ExecutionPlan.TIMED)) {
            armTimeLimit(e);
        }
        return true;
    }

    /**
     * READY to RUNNING for an attempt about to run on {@code e.device}'s {@code lane}, recording
     * its start; false when it was cancelled meanwhile or the run is stopping (it is then recorded
     * as cancelled and must not run). {@code clockHint}: a fresh clock reading to use as the start
     * ({@link Worker#handOffNanos()}), or 0 to read the clock.
     */
    private boolean beginAttempt(TaskExecution e, int lane, long clockHint) {
        int i = e.index;
        if (!deps.transition(i, TaskState.READY, TaskState.RUNNING)) {
            releaseResources(e);
            return false;
        }
        if (stopping) {
            releaseResources(e);
            cancelStarted(i);
            return false;
        }
        e.lane = lane;
        if (attempts != null) {
            attempts[graph.slot(i)] = e.attempt;
        }
        long t0 = clock || plan.has(i, ExecutionPlan.TIMED) ? (clockHint != 0 ? clockHint : System.nanoTime()) : 0;
        e.startNanos = t0;
        if (start != null) {
            start[graph.slot(i)] = t0;
            devices[graph.slot(i)] = (byte) (e.device.ordinal() + 1);
            lanes[graph.slot(i)] = lane;
        }
        if (bus.wantsRoutine()) {
            publish(EventType.TASK_STARTED, i, e.device, lane, e.attempt, null, null, null);
        }
        return true;
    }

    /**
     * A device attempt's work is enqueued (its body returned): a chained successor whose
     * predecessors are now all enqueued or done is dispatched at once, to follow their work on the
     * device. Runs on the backend's thread, before the attempt can complete.
     */
    void enqueuedOnDevice(TaskExecution e, @Nullable Object result) {
        AtomicIntegerArray waiting = notEnqueued;
        TaskExecution[] attempts = onDevice;
        if (waiting == null || attempts == null || stopping) {
            return;
        }
        int i = e.index;
        results[graph.slot(i)] = result; // chained successors read it before this task completes
        attempts[graph.slot(i)] = e;
        for (int k = graph.successorStart(i), stop = graph.successorEnd(i); k < stop; k++) {
            int s = graph.successor(k);
            if (!plan.has(s, ExecutionPlan.CHAINED) || waiting.decrementAndGet(graph.slot(s)) != 0
                    || !deps.transition(s, TaskState.CREATED, TaskState.READY)) {
                continue;
            }
            List<DeviceTask> follow = new ArrayList<>();
            for (int q = graph.predecessorStart(s), end = graph.predecessorEnd(s); q < end; q++) {
                int p = graph.predecessor(q);
                TaskExecution a = attempts[graph.slot(p)];
                if (a != null && !deps.is(p, TaskState.SUCCEEDED)) {
                    follow.add(a);
                }
            }
            if (bus.wantsRoutine()) {
                publish(EventType.TASK_READY, s, Device.GPU, -1, 1, null, null,
                        "dispatched to follow the device work of " + follow.size() + " predecessor(s)");
            }
            TaskExecution next = new TaskExecution(this, s, 1);
            next.awaitOnDevice = follow; // never changed after this
            route(next, Device.GPU);
        }
    }

    /** A task failed or was cancelled: chained successors already dispatched on its work are cancelled too. */
    private void cancelChained(int i, Throwable cause) {
        if (notEnqueued == null) {
            return;
        }
        for (int k = graph.successorStart(i), stop = graph.successorEnd(i); k < stop; k++) {
            int s = graph.successor(k);
            if (plan.has(s, ExecutionPlan.CHAINED) && (deps.is(s, TaskState.READY) || deps.is(s, TaskState.RUNNING))) {
                cancelTask(s, new TaskCancelledException("cancelled because task '" + graph.name(i)
                        + "', whose device work it followed, did not succeed", cause));
            }
        }
    }

    /** A device backend gives a queued attempt back: it runs on the CPU when the task has a CPU body. */
    boolean fallBackToCpu(TaskExecution e, String reason) {
        int i = e.index;
        if (!plan.has(i, ExecutionPlan.CPU) || deps.state(i) != TaskState.READY) {
            return false;
        }
        e.device = Device.CPU;
        publish(EventType.TASK_PLACED, i, Device.CPU, -1, e.attempt, null, null,
                "moved from the GPU to the CPU: " + reason);
        pool.submit(e);
        return true;
    }

    void finishOnDevice(TaskExecution e, @Nullable Object result, @Nullable Throwable error) {
        long t1 = clock ? System.nanoTime() : 0;
        attemptEnded(e, result, error, t1, null);
    }

    long deadline(TaskExecution e) {
        TimeLimiter limiter = plan.timeLimiter(e.index, e.device);
        if (limiter == null || e.startNanos == 0) {
            return Long.MAX_VALUE;
        }
        return e.startNanos + limiter.getTimeLimiterConfig().getTimeoutDuration().toNanos();
    }

    // ================================================================== time limits

    /** Starts Resilience4j's time limiter for an attempt; its time-out fails the attempt. */
    private void armTimeLimit(TaskExecution e) {
        TimeLimiter limiter = plan.timeLimiter(e.index, e.device);
        if (limiter == null) {
            return;
        }
        CompletableFuture<Object> attempt = new CompletableFuture<>();
        e.attemptFuture = attempt;
        limiter.executeCompletionStage(scheduler.timer(), () -> attempt).whenComplete((r, ex) -> {
            Throwable cause = ex instanceof CompletionException c && c.getCause() != null ? c.getCause() : ex;
            if (cause instanceof TimeoutException) {
                timedOut(e);
            }
        });
    }

    private void timedOut(TaskExecution e) {
        if (!e.claimTimeout()) {
            return;
        }
        int i = e.index;
        abandoned.add(e);
        e.interrupt();
        if (end != null) {
            end[graph.slot(i)] = System.nanoTime();
        }
        TimeoutException error = new TimeoutException("task '" + graph.name(i) + "' (attempt " + e.attempt
                + ") exceeded its time limit of "
                + Objects.requireNonNull(plan.timeLimiter(i, e.device)).getTimeLimiterConfig().getTimeoutDuration() + "; its body is abandoned"
                + " until it returns");
        publish(EventType.TASK_TIMED_OUT, i, e.device, e.lane, e.attempt, error, null, null);
        attemptFailed(e, error);
    }

    private void abandonedReturned(TaskExecution e, @Nullable Throwable error) {
        abandoned.remove(e);
        releaseResources(e);
        publish(EventType.TASK_ABANDONED_RETURNED, e.index, e.device, e.lane, e.attempt, error, null,
                "the timed-out body returned; its resources are released");
    }

    // ================================================================== cancellation and failure

    boolean isCancelled(int i) {
        return stopping || (anyTaskCancel && cancelledTasks.contains(i));
    }

    private boolean cancelTask(int i, TaskCancelledException cause) {
        if (deps.state(i).isTerminal()) {
            return false;
        }
        cancelledTasks.add(i);
        anyTaskCancel = true;
        if (deps.cancelIfNotStarted(i)) {
            results[graph.slot(i)] = new Outcome(cause);
            anyCancelled = true;
            publish(EventType.TASK_CANCELLED, i, null, -1, 0, cause, null, null);
            if (hasWatchers) {
                completeWatcherIfDone(i);
            }
            terminated(1 + cancelDescendants(i, cause));
            return true;
        }
        pool.forEachRunning(t -> {
            if (t instanceof TaskExecution e && e.run == this && e.index == i) {
                e.interrupt();
            }
        });
        return !deps.state(i).isTerminal();
    }

    /** Stops the run: nothing new starts; every not-started task is cancelled. Returns how many. */
    private int stop(Throwable cause) {
        stopping = true;
        int[] events = {0};
        int count = deps.cancelAllNotStarted(i -> cancelledBySweep(i, cause, events));
        if (count > 0) {
            anyCancelled = true;
        }
        summarizeSweep(events[0], cause);
        return count;
    }

    private int cancelDescendants(int i, Throwable cause) {
        int[] events = {0};
        int count = deps.cancelDescendants(i, s -> cancelledBySweep(s, cause, events));
        if (count > 0) {
            anyCancelled = true;
        }
        summarizeSweep(events[0], cause);
        return count;
    }

    private void cancelledBySweep(int i, Throwable cause, int[] events) {
        results[graph.slot(i)] = new Outcome(cause);
        if (events[0]++ < MAX_EVENTS_PER_SWEEP || bus.wantsRoutine()) {
            publish(EventType.TASK_CANCELLED, i, null, -1, 0, cause, null, null);
        }
        if (hasWatchers) {
            completeWatcherIfDone(i);
        }
    }

    private void summarizeSweep(int cancelled, Throwable cause) {
        if (cancelled > MAX_EVENTS_PER_SWEEP && !bus.wantsRoutine()) {
            publish(EventType.TASK_CANCELLED, -1, null, -1, 0, cause, null,
                    (cancelled - MAX_EVENTS_PER_SWEEP) + " more tasks cancelled (events not shown)");
        }
    }

    /** A task that won READY to RUNNING after the run started stopping: record it as cancelled. */
    private void cancelStarted(int i) {
        Throwable cause = new TaskCancelledException("run " + id + " is stopping; task '" + graph.name(i)
                + "' did not start");
        results[graph.slot(i)] = new Outcome(cause);
        deps.set(i, TaskState.CANCELLED);
        anyCancelled = true;
        publish(EventType.TASK_CANCELLED, i, null, -1, 0, cause, null, null);
        if (hasWatchers) {
            completeWatcherIfDone(i);
        }
        terminated(1 + cancelDescendants(i, cause));
    }

    /** A READY task that cannot be placed anywhere fails without running. */
    private void failNotStarted(int i, Throwable error) {
        failBeforeStart(new TaskExecution(this, i, 1), error);
    }

    /** A READY attempt fails without its body running (no device can take it). */
    private void failBeforeStart(TaskExecution e, Throwable error) {
        releaseResources(e);
        if (!deps.transition(e.index, TaskState.READY, TaskState.RUNNING)) {
            return;
        }
        results[graph.slot(e.index)] = new Outcome(error);
        if (failureMode == FailureMode.FAIL_FAST) {
            stopping = true;
        }
        deps.set(e.index, TaskState.FAILED);
        failures.add(new TaskFailure(graph.name(e.index), e.index, error, 0));
        publish(EventType.TASK_FAILED, e.index, e.device, -1, e.attempt, error, null, null);
        TaskCancelledException cause = new TaskCancelledException(
                "cancelled because task '" + graph.name(e.index) + "' failed", error);
        int count = 1 + cancelDescendants(e.index, cause);
        if (failureMode == FailureMode.FAIL_FAST) {
            count += stop(cause);
        }
        terminated(count);
    }

    private static boolean isInterruption(Throwable error) {
        return error instanceof InterruptedException || error instanceof CancellationException
                || error.getCause() instanceof InterruptedException;
    }

    // ================================================================== completion

    private void terminated(int count) {
        if (count > 0 && pending.addAndGet(-count) == 0) {
            finish();
        }
    }

    private void finish() {
        releaseLeftovers();
        long now = System.nanoTime();
        finishNanos = now;
        RunStatus outcome = !failures.isEmpty() ? RunStatus.FAILED
                : anyCancelled || cancelRequested ? RunStatus.CANCELLED : RunStatus.SUCCEEDED;
        RunProfile profile = buildProfile(outcome, now);
        finalProfile = profile;
        status = outcome;
        scheduler.runFinished(this, profile);
        EventType type = switch (outcome) {
            case SUCCEEDED -> EventType.RUN_SUCCEEDED;
            case CANCELLED -> EventType.RUN_CANCELLED;
            default -> EventType.RUN_FAILED;
        };
        GraphRunException failure = outcome == RunStatus.SUCCEEDED ? null : exception(outcome);
        publish(type, -1, null, -1, 0, failure, null,
                graph.size() + " tasks in " + Duration.ofNanos(now - submitNanos));
        if (hasWatchers) {
            for (int i : new ArrayList<>(watchers.keySet())) {
                completeWatcherIfDone(i);
            }
        }
        if (failure == null) {
            future.complete(this);
        }
        else {
            future.completeExceptionally(failure);
        }
    }

    private GraphRunException exception(RunStatus outcome) {
        List<String> cancelled = new ArrayList<>();
        for (int i = 0; i < graph.size(); i++) {
            if (deps.is(i, TaskState.CANCELLED)) {
                cancelled.add(graph.name(i));
            }
        }
        return new GraphRunException(id, graph.name(), outcome, List.copyOf(failures), cancelled);
    }

    private RunProfile buildProfile(RunStatus s, long finish) {
        return new RunProfile(id, graph, s, scheduler.policy().name(), submitted, submitNanos, finish,
                pool.parallelism(), start, end, devices, lanes, attempts, deps::state,
                scheduler.totalSteals() - stealsAtStart, scheduler.totalIdleSpins() - idleSpinsAtStart, abandoned());
    }

    private void completeWatcherIfDone(int i) {
        CompletableFuture<Object> f = watchers.get(i);
        if (f == null) {
            return;
        }
        TaskState s = deps.state(i);
        if (s == TaskState.SUCCEEDED) {
            f.complete(results[graph.slot(i)]);
        }
        else if (s.isTerminal()) {
            Throwable cause = errorOf(i);
            f.completeExceptionally(cause != null ? cause : new IllegalStateException("task " + s));
        }
    }

    // ================================================================== helpers

    @Nullable Object resultOf(int i) {
        return results[graph.slot(i)];
    }

    long finishNanos() {
        return finishNanos;
    }

    long submitNanos() {
        return submitNanos;
    }

    private @Nullable Throwable errorOf(int i) {
        Object r = results[graph.slot(i)];
        TaskState s = deps.state(i);
        return (s == TaskState.FAILED || s == TaskState.CANCELLED) && r instanceof Outcome o ? o.error : null;
    }

    private int attemptsOf(int i) {
        return attempts == null ? 1 : attempts[graph.slot(i)];
    }

    private void releaseResources(TaskExecution e) {
        ResourceDemand d = e.held;
        if (d != null) {
            e.held = null;
            d.limiter().release(d);
        }
    }

    private static String freeOf(ResourceDemand d) {
        StringBuilder sb = new StringBuilder("{");
        boolean first = true;
        for (String name : d.limiter().names()) {
            if (d.amount(name) > 0) {
                sb.append(first ? "" : ", ").append(name).append('=').append(d.limiter().available(name));
                first = false;
            }
        }
        return sb.append('}').toString();
    }

    private int indexOf(Task<?> task) {
        if (task.graph() != graph.graph()) {
            throw new IllegalArgumentException(task + " belongs to graph '" + task.graph().name()
                    + "', not to this run's graph '" + graph.name() + "'");
        }
        return task.index();
    }

    private void publish(EventType type, int i, @Nullable Device device, int lane, int attempt,
            @Nullable Throwable error, @Nullable DeviceDecision decision, @Nullable String detail) {
        if (!bus.wants(type)) {
            return;
        }
        bus.publish(type, id, graph.name(), i >= 0 ? graph.name(i) : null, i, device, lane, attempt, error, decision,
                detail);
    }

    private static RuntimeException rethrow(@Nullable Throwable cause) {
        if (cause instanceof GraphRunException g) {
            return new GraphRunException(g.runId(), g.graph(), g.status(), g.failures(), g.cancelled());
        }
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new CompletionException(cause);
    }

    /** The outcome stored in place of a result for a failed or cancelled task. */
    private record Outcome(Throwable error) {
    }
}
