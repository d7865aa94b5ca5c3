package io.hts.engine.run;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.exec.PoolTask;
import io.hts.engine.exec.ResourceDemand;
import io.hts.engine.exec.Worker;
import io.hts.engine.graph.CompiledGraph;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGroup;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of one task in one run: the unit queued in the worker pool (a {@link PoolTask}),
 * handed to a device backend (a {@link DeviceTask}), and the {@link TaskContext} its body sees.
 * One object per attempt, nothing else is allocated to run a task.
 *
 * <p><b>Interrupts.</b> A cancellation or a time-out interrupts the thread running the body, but
 * must never interrupt that thread after it has moved on to another task. {@code phase}
 * arbitrates: the interrupter moves RUNNING to INTERRUPTING with a CAS, interrupts, then sets
 * INTERRUPTED; the runner, when the body returns, moves RUNNING to DONE with a CAS, and if that
 * fails waits out INTERRUPTING and clears the interrupt flag before going on.
 *
 * <p><b>Time-outs.</b> When a time limit is armed, the body's return and the time-out race for
 * {@code outcome} with a CAS; the loser backs off. A timed-out attempt is failed (and maybe
 * retried) at once; when its body eventually returns, it only releases what it held.
 */
final class TaskExecution extends PoolTask implements TaskContext, DeviceTask {

    private static final VarHandle PHASE;
    private static final VarHandle OUTCOME;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PHASE = l.findVarHandle(TaskExecution.class, "phase", int.class);
            OUTCOME = l.findVarHandle(TaskExecution.class, "outcome", int.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private static final int IDLE = 0;
    private static final int RUNNING = 1;
    private static final int INTERRUPTING = 2;
    private static final int INTERRUPTED = 3;
    private static final int DONE = 4;

    private static final int PENDING = 0;
    private static final int COMPLETED = 1;
    private static final int TIMED_OUT = 2;

    final GraphRun run;
    final int index;
    final int attempt;
    Device device = Device.CPU;
    int lane = -1;
    /** Device attempts of predecessors still in flight that this early-dispatched attempt must follow. */
    List<DeviceTask> awaitOnDevice = List.of();
    /** The resources this attempt holds, released when it ends (or its abandoned body returns). */
    @Nullable ResourceDemand held;
    long startNanos;
    @Nullable CompletableFuture<Object> attemptFuture;
    private @Nullable Thread runner;
    private int phase;
    private int outcome;

    TaskExecution(GraphRun run, int index, int attempt) {
        this.run = run;
        this.index = index;
        this.attempt = attempt;
    }

    @Override
    protected @Nullable PoolTask execute(Worker worker) {
        return run.executeOnCpu(this, worker);
    }

    // ------------------------------------------------------------------ interrupt arbitration

    void beginBody(Thread thread) {
        runner = thread;
        PHASE.setRelease(this, RUNNING);
    }

    void endBody() {
        if (!PHASE.compareAndSet(this, RUNNING, DONE)) {
            while ((int) PHASE.getVolatile(this) == INTERRUPTING) {
                Thread.onSpinWait();
            }
            PHASE.setVolatile(this, DONE);
        }
        // Whoever set it (an interrupter, or the body itself), the flag must not reach the next task.
        Thread.interrupted();
    }

    /** Interrupts the body's thread if the body is still running; never a later task's. */
    boolean interrupt() {
        if (PHASE.compareAndSet(this, RUNNING, INTERRUPTING)) {
            Thread t = runner;
            if (t != null) {
                t.interrupt();
            }
            PHASE.setVolatile(this, INTERRUPTED);
            return true;
        }
        return false;
    }

    boolean bodyRunning() {
        int p = (int) PHASE.getAcquire(this);
        return p == RUNNING || p == INTERRUPTING || p == INTERRUPTED;
    }

    /** The body returned before the time limit: it owns the outcome. */
    boolean claimCompletion() {
        return OUTCOME.compareAndSet(this, PENDING, COMPLETED);
    }

    /** The time limit passed first: the timer owns the outcome. */
    boolean claimTimeout() {
        return OUTCOME.compareAndSet(this, PENDING, TIMED_OUT);
    }

    boolean timedOut() {
        return (int) OUTCOME.getAcquire(this) == TIMED_OUT;
    }

    // ------------------------------------------------------------------ TaskContext

    @Override
    public String taskName() {
        return run.graph.name(index);
    }

    @Override
    public String graphName() {
        return run.graph.name();
    }

    @Override
    public long runId() {
        return run.id();
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
        CompiledGraph g = run.graph;
        int up = upstream.index();
        if (upstream.graph() != g.graph() || !g.dependsOn(index, up)) {
            throw new IllegalArgumentException("task '" + taskName() + "' reads the result of " + upstream
                    + ", which is not one of its direct dependencies " + g.predecessorNames(index)
                    + "; declare it with after(...)");
        }
        return (U) run.resultOf(up);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <U extends @Nullable Object> List<U> inputs(TaskGroup<U> upstream) {
        CompiledGraph g = run.graph;
        int size = upstream.size();
        if (size == 0) {
            return List.of();
        }
        int from = upstream.get(0).index();
        if (upstream.graph() != g.graph() || g.dependenciesBetween(index, from, from + size) != size) {
            throw new IllegalArgumentException("task '" + taskName() + "' reads the results of " + upstream
                    + ", but not all of its members are direct dependencies; declare it with after(group)");
        }
        List<U> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add((U) run.resultOf(from + i));
        }
        return out;
    }

    @Override
    public boolean isCancelled() {
        return run.isCancelled(index) || timedOut();
    }

    // ------------------------------------------------------------------ DeviceTask

    @Override
    public GpuBody<?> gpuBody() {
        GpuBody<?> body = run.graph.task(index).gpuBody();
        if (body == null) {
            throw new IllegalStateException("task '" + taskName() + "' has no GPU body");
        }
        return body;
    }

    @Override
    public TaskContext context() {
        return this;
    }

    @Override
    public long deadlineNanos() {
        return run.deadline(this);
    }

    @Override
    public boolean start(int deviceLane) {
        return run.startOnDevice(this, deviceLane);
    }

    @Override
    public int gpuOrdinal() {
        return run.graph.task(index).gpuOrdinal();
    }

    @Override
    public List<@Nullable Object> inputs() {
        CompiledGraph g = run.graph;
        int from = g.predecessorStart(index);
        int to = g.predecessorEnd(index);
        if (from == to) {
            return List.of();
        }
        List<@Nullable Object> out = new ArrayList<>(to - from);
        for (int k = from; k < to; k++) {
            out.add(run.resultOf(g.predecessor(k)));
        }
        return out;
    }

    @Override
    public List<DeviceTask> awaitOnDevice() {
        return awaitOnDevice;
    }

    @Override
    public void enqueued(@Nullable Object result) {
        run.enqueuedOnDevice(this, result);
    }

    @Override
    public boolean fallBackToCpu(String reason) {
        return run.fallBackToCpu(this, reason);
    }

    @Override
    public void complete(@Nullable Object result) {
        run.finishOnDevice(this, result, null);
    }

    @Override
    public void fail(Throwable error) {
        run.finishOnDevice(this, null, error);
    }

    @Override
    public String toString() {
        return "attempt " + attempt + " of task '" + taskName() + "' in run " + run.id();
    }
}
