package io.hts.engine.run;

import io.github.resilience4j.timelimiter.TimeLimiter;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.ResourceDemand;
import io.hts.engine.exec.internal.Worker;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.RunResults;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.observe.TaskTiming;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of one task in one run: the unit queued in the worker pool (a {@link PoolTask}),
 * handed to a device backend (a {@link DeviceTask}), and the {@link TaskContext} its body sees.
 *
 * <p><b>Who reports the attempt's end ({@code outcome}).</b> QUEUED until it starts; STARTED once
 * it won READY to RUNNING (and the run was not stopping); then exactly one of: COMPLETED (its body
 * returned, or its backend reported, first), TIMED_OUT (its time limit passed first, and then
 * RETURNED_LATE when its body or device reports), each by one compare-and-set; or WITHDRAWN from
 * QUEUED when it never started (cancelled while queued, not started because the run stops, moved
 * to the CPU, or reported by a backend that never started it). A device's start first claims
 * QUEUED to STARTING, so that it and a move to the CPU cannot both win. The loser of a race backs off: a
 * body that returns after its time-out only releases what it held; a second report of a backend
 * is ignored. An untimed CPU attempt has no competitor and skips the compare-and-set.
 *
 * <p>The interrupt arbitration of its body is {@link InterruptibleBody}'s.
 */
final class TaskExecution extends InterruptibleBody implements TaskContext, DeviceTask {

    private static final VarHandle OUTCOME;
    private static final VarHandle HELD;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            OUTCOME = l.findVarHandle(TaskExecution.class, "outcome", int.class);
            HELD = l.findVarHandle(TaskExecution.class, "held", ResourceDemand.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    static final int QUEUED = 0;
    static final int STARTED = 1;
    static final int COMPLETED = 2;
    static final int TIMED_OUT = 3;
    static final int WITHDRAWN = 4;
    static final int RETURNED_LATE = 5;
    static final int STARTING = 6;

    /** {@code lane} of an attempt that counts its task's only dependency when it starts (see {@link #countsDependency}). */
    private static final int COUNTS_DEPENDENCY = -2;

    /** {@code lane} of an attempt running on another member of the cluster (a distributed group's slice). */
    static final int REMOTE_LANE = TaskTiming.REMOTE_LANE;

    final GraphRun run;
    final int index;
    final int attempt;
    Device device = Device.CPU;
    /** The worker or stream it started on; -1 before; {@link #COUNTS_DEPENDENCY} (kept here: no field more per task). */
    int lane = -1;

    long startNanos;
    /** What only some attempts need (a time limit, a nested run, device work to follow); made by the attempt's owner. */
    private volatile @Nullable Extras extras;
    /** The resources this attempt holds; taken back exactly once (see {@link #takeHeld()}). */
    private volatile @Nullable ResourceDemand held;
    /** Accessed through {@code OUTCOME}: release for STARTED, compare-and-set for the ends. */
    private int outcome;

    TaskExecution(GraphRun run, int index, int attempt) {
        this.run = run;
        this.index = index;
        this.attempt = attempt;
    }

    /**
     * The first attempt of a CPU task with one dependency, made by the worker that ran that
     * dependency before the dependency is counted: it counts it when it starts, in the same step
     * as its start ({@link DependencyManager#dependencyDoneAndStart}), so its task never passes
     * through READY.
     */
    static TaskExecution countingDependency(GraphRun run, int index) {
        TaskExecution e = new TaskExecution(run, index, 1);
        e.lane = COUNTS_DEPENDENCY;
        return e;
    }

    /** Whether this attempt counts its task's dependency as it starts; asked once, by its runner, before the start. */
    boolean countsDependency() {
        if (lane != COUNTS_DEPENDENCY) {
            return false;
        }
        lane = -1;
        return true;
    }

    @Override
    protected @Nullable PoolTask execute(Worker worker) {
        return run.attempts.runOnCpu(this, worker);
    }

    // ------------------------------------------------------------------ resources

    void hold(ResourceDemand demand) {
        held = demand;
    }

    /** The resources held, taken back at most once: the caller releases them. */
    @Nullable
    ResourceDemand takeHeld() {
        return held == null ? null : (ResourceDemand) HELD.getAndSet(this, null);
    }

    // ------------------------------------------------------------------ outcome

    int outcome() {
        return (int) OUTCOME.getAcquire(this);
    }

    /** QUEUED to STARTED, by the thread that won the task's READY to RUNNING (before any timer is armed). */
    void started() {
        OUTCOME.setRelease(this, STARTED);
    }

    /** The body returned (or the backend reported) first: it owns the end. */
    boolean claimCompletion() {
        return OUTCOME.compareAndSet(this, STARTED, COMPLETED);
    }

    /** The time limit passed first: the timer owns the end. */
    boolean claimTimeout() {
        return OUTCOME.compareAndSet(this, STARTED, TIMED_OUT);
    }

    /** The body (or device) of a timed-out attempt returned: the first such report gives back what it held. */
    boolean claimLateReturn() {
        return OUTCOME.compareAndSet(this, TIMED_OUT, RETURNED_LATE);
    }

    /** The attempt never started and never will: nothing it reports later counts. */
    boolean withdraw() {
        return OUTCOME.compareAndSet(this, QUEUED, WITHDRAWN);
    }

    /**
     * QUEUED to STARTING: a device's {@code start} claims the attempt before it tries READY to
     * RUNNING, so that a concurrent {@code fallBackToCpu} (which withdraws from QUEUED) and the
     * start cannot both win: the attempt either runs on its device or moves to the CPU.
     */
    boolean claimStart() {
        return OUTCOME.compareAndSet(this, QUEUED, STARTING);
    }

    /** The attempt did not start after all (by the thread that tried to start it). */
    void notStarted() {
        if (!OUTCOME.compareAndSet(this, QUEUED, WITHDRAWN)) {
            OUTCOME.compareAndSet(this, STARTING, WITHDRAWN);
        }
    }

    /**
     * Whether the time limit passed first. A volatile read: the body's side of the Dekker pair
     * with the timer (see {@link #waitFor}).
     */
    boolean timedOut() {
        return (int) OUTCOME.getVolatile(this) == TIMED_OUT;
    }

    /**
     * The body starts waiting for {@code nested} ({@code ctx.execute}): publishes it for
     * cancellers, then cancels it if this attempt was already cancelled or timed out. A Dekker pair
     * with every canceller, each side sequentially consistent: the body writes {@code nested}
     * (volatile) then reads the outcome and the cancel requests (volatile); a canceller writes
     * those (a compare-and-set, a volatile store) then reads {@code nested} (volatile), in
     * {@link #cancelNested}. So at least one of them sees the other and the nested run is
     * cancelled; both may, and a second cancel is a no-op.
     *
     * @return whether this attempt was cancelled (the nested run is cancelled then)
     */
    boolean waitFor(GraphRun nested) {
        extras().nested = nested;
        if (isCancelled()) {
            nested.cancel();
            return true;
        }
        return false;
    }

    /** The body's wait for its nested run is over: cancelling this attempt no longer reaches it. */
    void waitOver() {
        extras().nested = null;
    }

    @Override
    void onInterrupt() {
        cancelNested();
    }

    /** This attempt was cancelled or timed out: the run its body waits for is cancelled too. */
    void cancelNested() {
        Extras x = extras;
        GraphRun n = x == null ? null : x.nested;
        if (n != null) {
            n.cancel();
        }
    }

    /** The time limiter armed for this attempt (before its body runs), or null. */
    @Nullable
    TimeLimiter limiter() {
        Extras x = extras;
        return x == null ? null : x.limiter;
    }

    /** Arms a time limit: the limiter first, then (once scheduled) the time-out task. */
    void armed(TimeLimiter limiter) {
        extras().limiter = limiter;
    }

    void timeout(Future<?> timeout) {
        extras().timeout = timeout;
    }

    /** The scheduled time-out, or null. */
    @Nullable
    Future<?> timeout() {
        Extras x = extras;
        return x == null ? null : x.timeout;
    }

    /** For a device-ordered attempt, before it is dispatched: the predecessors' device work it follows. */
    void follows(List<DeviceTask> predecessors) {
        extras().awaitOnDevice = predecessors;
    }

    /** Made on first use by the attempt's owner (one thread at a time), published by the volatile store. */
    private Extras extras() {
        Extras x = extras;
        if (x == null) {
            x = new Extras();
            extras = x;
        }
        return x;
    }

    /** The fields few attempts need, kept out of the one object every task allocates. */
    private static final class Extras {
        volatile @Nullable TimeLimiter limiter;
        volatile @Nullable Future<?> timeout;
        volatile @Nullable GraphRun nested;
        List<DeviceTask> awaitOnDevice = List.of();
    }

    // ------------------------------------------------------------------ TaskContext

    @Override
    public String taskName() {
        return run.topology.name(index);
    }

    @Override
    public String graphName() {
        return run.topology.name();
    }

    @Override
    public long runId() {
        return run.runId();
    }

    @Override
    public int attempt() {
        return attempt;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public int groupIndex() {
        return run.graph.task(index).groupIndex();
    }

    @Override
    @SuppressWarnings("unchecked")
    public <U extends @Nullable Object> U input(Task<U> upstream) {
        GraphTopology t = run.topology;
        int up = upstream.index();
        if (upstream.graph() != run.graph.graph() || !t.dependsOn(index, up)) {
            throw new IllegalArgumentException("task '" + taskName() + "' reads the result of " + upstream
                    + ", which is not one of its direct dependencies " + t.predecessorNames(index)
                    + "; declare it with after(...)");
        }
        return (U) run.resultOf(up);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <U extends @Nullable Object> List<U> inputs(TaskGroup<U> upstream) {
        GraphTopology t = run.topology;
        List<Task<U>> members = upstream.members();
        if (members.isEmpty()) {
            return List.of();
        }
        List<U> out = new ArrayList<>(members.size());
        for (Task<U> m : members) {
            if (upstream.graph() != run.graph.graph() || !t.dependsOn(index, m.index())) {
                throw new IllegalArgumentException("task '" + taskName() + "' reads the results of " + upstream
                        + ", but its member '" + m.name() + "' is not a direct dependency; declare it with"
                        + " after(group)");
            }
            out.add((U) run.resultOf(m.index()));
        }
        return out;
    }

    @Override
    public boolean isCancelled() {
        return timedOut() || run.propagation.cancelRequest(index) != null;
    }

    @Override
    public RunResults execute(TaskGraph graph) {
        return run.attempts.executeNested(this, graph);
    }

    // ------------------------------------------------------------------ DeviceTask

    @Override
    public GpuBody<?> gpuBody() {
        GpuBody<?> body = run.graph.task(index).gpuBody();
        if (body == null) {
            throw new IllegalStateException("task '" + taskName() + "' has no GPU body");
        }
        TaskScopes scopes = run.scheduler.scopes;
        GpuBody<?> user = body;
        GpuBody<?> scoped = scopes.isEmpty() ? body : ctx -> scopes.around(run, index, () -> user.run(ctx));
        if (run.placement.onWaitingCaller()) {
            return ctx ->
                    UserCode.onCaller(run.scheduler, () -> scoped.run(ctx)); // the caller's interrupt kept from it
        }
        return scoped; // on the device's thread, in its scopes as a CPU body is
    }

    @Override
    public TaskContext context() {
        return this;
    }

    @Override
    public long deadlineNanos() {
        return run.attempts.deadline(this);
    }

    @Override
    public boolean start(int deviceLane) {
        return run.attempts.startOnDevice(this, deviceLane);
    }

    @Override
    public int gpuOrdinal() {
        return run.graph.task(index).gpuOrdinal();
    }

    @Override
    public List<@Nullable Object> inputs() {
        GraphTopology t = run.topology;
        int from = t.predecessorStart(index);
        int to = t.predecessorEnd(index);
        if (from == to) {
            return List.of();
        }
        List<@Nullable Object> out = new ArrayList<>(to - from);
        for (int k = from; k < to; k++) {
            out.add(run.resultOf(t.predecessor(k)));
        }
        return out;
    }

    @Override
    public List<DeviceTask> awaitOnDevice() {
        Extras x = extras;
        return x == null ? List.of() : x.awaitOnDevice;
    }

    @Override
    public boolean enqueued(@Nullable Object result) {
        return run.ordering.enqueued(this, result);
    }

    @Override
    public boolean fallBackToCpu(String reason) {
        return run.attempts.fallBackToCpu(this, reason);
    }

    @Override
    public void complete(@Nullable Object result) {
        run.attempts.reported(this, result, null);
    }

    @Override
    public void fail(Throwable error) {
        run.attempts.reported(this, null, error);
    }

    @Override
    public void failDeviceLost(Throwable error) {
        if (device != Device.CPU) {
            run.attempts.retries.deviceLost(index); // before the report: its retry decision reads it
        }
        run.attempts.reported(this, null, error);
    }

    @Override
    public String toString() {
        return "attempt " + attempt + " of task '" + taskName() + "' in run " + run.runId();
    }
}
