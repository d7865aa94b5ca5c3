package io.hts.engine.run;

import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.WorkStealingPool;
import io.hts.engine.exec.internal.Worker;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.RunResults;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.graph.internal.CompiledGraph;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.run.internal.GraphExtension;
import io.hts.engine.run.internal.RunExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * One run of a graph: its own dependency counters, states and results over the graph's shared
 * compiled form, so many runs of one graph proceed at once without touching each other.
 *
 * <p>Obtained from {@link Scheduler#submit}. Wait with {@link #await()} (or compose
 * {@link #future()}), then read {@link #result(Task)} / {@link #results(TaskGroup)}. While it runs:
 * {@link #state(Task)}, {@link #cancel()}, {@link #cancel(Task)}, {@link #cancel(TaskGroup)},
 * {@link #diagnose()} (what every unfinished task waits on), {@link #profile()}.
 *
 * <p>A run always ends: every task reaches exactly one final state (SUCCEEDED, FAILED or
 * CANCELLED), and {@link #await()} returns or throws once all have, whatever bodies, listeners or
 * device backends throw. Waiting inside a task body is safe with {@link #await()} and
 * {@code ctx.execute(graph)}: the waiting worker runs other ready tasks meanwhile.
 */
public final class GraphRun implements RunResults {

    /*
     * The run is split by concern; each part opens with its invariants and memory-ordering choices:
     *   DependencyManager  per-task states and the transition rule (compare-and-set only)
     *   RunState           per-run status, the counting protocol, cancel against finish
     *   TaskResults        results and causes, and how they are published
     *   Propagation        the one path by which tasks end, and what the winner of an end does
     *   Attempts           attempts: start, end, retries, time limits, abandoned bodies, devices
     *   Placement          devices, resources and routes of READY attempts
     *   DeviceOrdering     successors dispatched on their predecessors' enqueued device work
     *   ResultLifetimes    when releasable results are released
     *   RunRecorder        timings for the profile, and events
     *   TaskWatchers       whenDone futures
     *   RunCompletion      the run's end, its future, and waits that help
     *   DynamicTasks       tasks added while the run runs (internal: the base of subflows and async tasks)
     *   extension          the part of an extension (cluster distribution) for the tasks it owns, through the
     *                      hooks of io.hts.engine.run.internal (RunHooks, AttemptHooks); null for most runs
     */

    final CompiledGraph graph;
    final GraphTopology topology;
    final Scheduler scheduler;
    final ExecutionPlan plan;
    final WorkStealingPool pool;
    private final long id;
    private final FailureMode failureMode;
    final DependencyManager deps;
    final TaskResults results;
    final RunState state;
    final RunRecorder recorder;
    final TaskWatchers watchers;
    final Propagation propagation;
    final Attempts attempts;
    final Placement placement;
    final DeviceOrdering ordering;
    final @Nullable ResultLifetimes lifetimes;
    final RunCompletion completion;
    /** The extension's part (the slices of its distributed groups); null when the plan has no owned task. */
    final @Nullable RunExtension extension;
    /** Tasks added while the run runs; null until the first is (see {@link DynamicTasks}). */
    volatile @Nullable DynamicTasks dynamic;

    GraphRun(Scheduler scheduler, ExecutionPlan plan, long id, FailureMode failureMode, boolean profiling) {
        this.scheduler = scheduler;
        this.plan = plan;
        this.graph = plan.graph;
        this.topology = graph.topology();
        this.pool = scheduler.pool();
        this.id = id;
        this.failureMode = failureMode;
        this.deps = new DependencyManager(topology, plan.initialWords);
        this.results = new TaskResults(topology, deps);
        this.state = new RunState(this, topology.size());
        this.recorder = new RunRecorder(this, profiling);
        this.watchers = new TaskWatchers(results, scheduler);
        this.propagation = new Propagation(this);
        this.attempts = new Attempts(this);
        this.placement = new Placement(this);
        this.ordering = new DeviceOrdering(this);
        this.lifetimes = graph.hasGpuBodies() ? new ResultLifetimes(this) : null;
        this.completion = new RunCompletion(this);
        GraphExtension owner = plan.extension;
        this.extension = owner == null ? null : owner.run(new RunHooks(this));
        if (extension != null) {
            RunExtension x = extension;
            completion.future().whenComplete((r, ex) -> x.finished());
        }
    }

    // ================================================================== public API

    /** The run's id, unique within its scheduler. */
    @Override
    public long runId() {
        return id;
    }

    /** The graph being run. */
    public TaskGraph graph() {
        return graph.graph();
    }

    /** The run's status now. */
    @Override
    public RunStatus status() {
        return state.status();
    }

    /** Whether the run has finished. */
    public boolean isDone() {
        return state.status().isDone();
    }

    /** What the run does when a task fails. */
    public FailureMode failureMode() {
        return failureMode;
    }

    /** When the run was submitted. */
    public Instant submitted() {
        return recorder.submitted;
    }

    /** Tasks not yet in a final state (counted; a few may lag by a worker's batch while the run goes on). */
    public int pendingTasks() {
        return state.pending();
    }

    /**
     * Completes with this run when every task succeeded, exceptionally with a
     * {@link GraphRunException} when the run failed or was cancelled.
     */
    public CompletableFuture<GraphRun> future() {
        return completion.future().thenApply(r -> r);
    }

    /**
     * Waits for the run to finish. On a worker of an HTS scheduler (inside a task body) the worker
     * runs other ready tasks while it waits, so a body may wait for a run of its own scheduler.
     *
     * @return this run, when every task succeeded
     * @throws GraphRunException when a task failed or the run was cancelled (the message names the
     *     failed tasks, the cause is the first failure)
     */
    public GraphRun await() {
        return completion.await();
    }

    /**
     * Waits for the run to finish, at most {@code timeout}; on a worker it helps meanwhile, as
     * {@link #await()} does.
     *
     * @param timeout the longest wait
     * @return this run, when every task succeeded
     * @throws TimeoutException when the run is still going after {@code timeout}
     * @throws InterruptedException when interrupted while waiting
     * @throws GraphRunException when a task failed or the run was cancelled
     */
    public GraphRun await(Duration timeout) throws TimeoutException, InterruptedException {
        return completion.await(timeout);
    }

    /**
     * The state of a task in this run.
     *
     * @param task a task of this run's graph
     * @return its state
     */
    @Override
    public TaskState state(Task<?> task) {
        return deps.observed(indexOf(task));
    }

    /** Every task's state, by name, in graph order. */
    public Map<String, TaskState> states() {
        Map<String, TaskState> out = new LinkedHashMap<>();
        for (int i = 0; i < topology.size(); i++) {
            out.put(topology.name(i), deps.observed(i));
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
    @Override
    public <T extends @Nullable Object> T result(Task<T> task) {
        int i = indexOf(task);
        TaskState s = deps.state(i);
        if (s != TaskState.SUCCEEDED) {
            Throwable cause = errorOf(i);
            throw new IllegalStateException(
                    "task '" + task.name() + "' of run " + id + " has no result: it is " + s
                            + (cause != null ? " (" + TaskFailure.describe(cause) + ")" : ""),
                    cause);
        }
        return (T) resultOf(i);
    }

    /**
     * The results of a group's members, in index order.
     *
     * @param group a group of this run's graph
     * @param <T> the members' result type
     * @return the results
     * @throws IllegalStateException when a member has not succeeded
     */
    @Override
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
    @Override
    public Optional<Throwable> error(Task<?> task) {
        return Optional.ofNullable(errorOf(indexOf(task)));
    }

    /** The tasks that failed for good, first failure first. */
    public List<TaskFailure> failures() {
        return state.failures();
    }

    /** Tasks whose time limit passed while their body has not returned yet. */
    public List<String> abandoned() {
        return attempts.abandoned();
    }

    /**
     * Cancels the run: nothing new starts, running bodies see {@code ctx.isCancelled()} and an
     * interrupt, and the run finishes when they return, with every task's final state recorded.
     *
     * @return whether this call cancelled the run; when it did, the run ends CANCELLED (or FAILED,
     *     when a task failed), never SUCCEEDED
     */
    public boolean cancel() {
        if (!state.requestCancel()) {
            return false;
        }
        TaskCancelledException cause =
                new TaskCancelledException("run " + id + " of graph '" + graph.name() + "' was cancelled");
        propagation.stop(cause);
        attempts.interrupt(-1);
        DynamicTasks dynamic = this.dynamic;
        if (dynamic != null) {
            dynamic.interruptRunning();
        }
        scheduler.runCancelled(id); // the slices elsewhere were cancelled by the stop (Propagation.stop)
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
        return propagation.cancelTask(
                indexOf(task), new TaskCancelledException("task '" + task.name() + "' was cancelled"));
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
            any |= propagation.cancelTask(indexOf(t), cause);
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
        return (CompletableFuture<T>)
                (CompletableFuture<?>) watchers.watch(indexOf(task)).thenApply(x -> x);
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
            if (ex == null) {
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
                    all.completeExceptionally(
                            ex instanceof CompletionException c && c.getCause() != null ? c.getCause() : ex);
                }
            });
        }
        return all;
    }

    /**
     * The run's profile: the final one once the run has finished, a snapshot before. A snapshot is
     * a copy made at once, which does not change as the run goes on, and whose states agree with
     * its timings: a task shown running has no end, one shown ended has its end, and a task that
     * starts while the copy is made is shown as not started yet.
     *
     * @return the profile
     */
    public RunProfile profile() {
        RunProfile p = completion.finalProfile();
        return p != null ? p : recorder.profile(RunStatus.RUNNING, -1);
    }

    /**
     * What every unfinished task waits on: the seed's answer to "the program hangs".
     *
     * @return the diagnosis
     */
    public Diagnosis diagnose() {
        return RunDiagnostics.diagnose(this);
    }

    @Override
    public String toString() {
        return "run " + id + " of graph '" + graph.name() + "' (" + state.status() + ", " + state.pending() + " of "
                + topology.size() + " tasks unfinished)";
    }

    // ================================================================== start and finish

    /**
     * Makes the roots ready. Called once by the scheduler after registering the run;
     * {@code callerWaits}: its caller waits for the run right after (and may launch a GPU root
     * itself: {@link Placement#callerStarts()}).
     */
    void start(boolean callerWaits) {
        int roots = topology.rootCount();
        if (topology.size() == 0) {
            finish();
            return;
        }
        if (roots <= 64) {
            boolean offer =
                    callerWaits && scheduler.gpuBackend() != null && !(Thread.currentThread() instanceof Worker);
            if (offer) {
                placement.callerStarts();
            }
            try {
                for (int k = 0; k < roots; k++) {
                    PoolTask t = placement.rootReady(topology.root(k));
                    if (t != null) {
                        pool.submit(t);
                    }
                }
            } finally {
                if (offer) {
                    placement.callerStarted();
                }
            }
        } else {
            RootSeeder.seed(this);
        }
    }

    /** Called once, by the thread whose count brought the run's pending tasks to zero. */
    void finish() {
        completion.finish();
    }

    // ================================================================== results and causes

    @Nullable
    Object resultOf(int i) {
        return results.resultOf(i);
    }

    void storeResult(int i, @Nullable Object result) {
        results.store(i, result);
    }

    void storeOutcome(int i, Throwable cause) {
        results.storeCause(i, cause);
    }

    @Nullable
    Throwable errorOf(int i) {
        return results.errorOf(i);
    }

    private int indexOf(Task<?> task) {
        if (task.graph() != graph.graph()) {
            throw new IllegalArgumentException(task + " belongs to graph '"
                    + task.graph().name() + "', not to this run's graph '" + graph.name() + "'");
        }
        return task.index();
    }
}
