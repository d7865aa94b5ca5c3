package io.hts.engine.run;

import io.hts.engine.exec.internal.Worker;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.DeviceDecision;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskCauses;
import io.hts.engine.observe.internal.EventBus;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What a run records of itself: per-task timings for its profile, and its events.
 *
 * <p><b>Timings.</b> With profiling on, per task (by task index): the start and end of its last attempt
 * ({@link System#nanoTime()}), its device and its worker or stream, and its attempt count when any
 * task retries. Each array entry is written only by the thread that runs (or ended) that attempt,
 * before the task's terminal transition; a profile reads them after the run finished (or, as a
 * snapshot, while it runs).
 *
 * <p><b>Layout.</b> Unlike the run's state words, which workers race for by compare-and-set and
 * which are spread over cache lines ({@link GraphTopology#slot(int)}), the timing arrays are dense,
 * indexed by task: each entry is written once or twice by the one thread that runs the task, and
 * neighbouring tasks mostly run on the same worker (a chain's continuation, a tree's subtree, a
 * range of roots), so dense arrays give a worker one sequential stream per array where the spread
 * layout gave it sixteen (docs/benchmarks.md, step 3, has what that saved).
 *
 * <p><b>One clock read per task on a busy worker.</b> A task's end is read when its body returns.
 * Its start is read afresh, except when the worker goes straight on from the previous task of the
 * same run, which it ran itself (a continuation, or a task it pushed on its own deque), and no
 * code but the kernel's ran in between: the start is then that task's end, and the few tens of
 * nanoseconds of hand-off count in the new task. Every way out of the kernel on a worker clears
 * the hand-off first: {@link UserCode#enter} (listeners, {@code whenDone} stages, releases,
 * policies), {@link ResilienceOutcomes} (a retry's result predicate, interval function and event
 * consumers, a time limiter's consumers) and a device backend's dispatch. So a start is never
 * before the run's submission nor before a dependency's end, and never absorbs the time of code
 * that ran between two tasks; see {@link Worker#handOffNanos(long)}.
 *
 * <p><b>Events</b> go through the scheduler's {@link EventBus}, which isolates listeners: nothing a
 * listener throws (not even an {@code Error}) reaches the run's bookkeeping.
 */
final class RunRecorder {

    private final GraphRun run;
    private final GraphTopology topology;
    private final EventBus bus;
    private final long @Nullable [] start;
    private final long @Nullable [] end;
    private final byte @Nullable [] devices;
    private final int @Nullable [] lanes;
    private final int @Nullable [] attempts;
    private final boolean clock;
    final long submitNanos;
    final Instant submitted;
    /** The policy when the run was submitted: the one its profile names, whatever is switched in later. */
    private final String policy;

    private final long stealsAtStart;
    private final long idleSpinsAtStart;

    RunRecorder(GraphRun run, boolean profiling) {
        this.run = run;
        this.topology = run.topology;
        this.bus = run.scheduler.eventBus();
        int n = topology.size();
        this.start = profiling ? new long[n] : null;
        this.end = profiling ? new long[n] : null;
        this.devices = profiling ? new byte[n] : null;
        this.lanes = profiling ? new int[n] : null;
        this.attempts = run.plan.anyRetry ? new int[n] : null;
        this.clock = profiling || run.plan.costCells != null;
        this.submitted = Instant.now();
        this.policy = run.scheduler.policy().name();
        this.submitNanos = System.nanoTime();
        this.stealsAtStart = run.pool.totalSteals();
        this.idleSpinsAtStart = run.pool.totalIdleSpins();
    }

    /** The clock when timings are kept, else 0. */
    long now() {
        return clock ? System.nanoTime() : 0;
    }

    /** An attempt started on a lane; {@code w} is its CPU worker, or null on a device. */
    void started(TaskExecution e, int lane, @Nullable Worker w) {
        int i = e.index;
        if (attempts != null) {
            attempts[i] = e.attempt;
        }
        if (clock) {
            long hint = w != null ? w.handOffNanos(run.runId()) : 0;
            long t0 = hint != 0 ? hint : System.nanoTime();
            e.startNanos = t0;
            if (start != null) {
                start[i] = t0;
                devices[i] = (byte) (e.device.ordinal() + 1);
                lanes[i] = lane;
            }
        }
        if (bus.wantsRoutine()) {
            publish(EventType.TASK_STARTED, i, e.device, lane, e.attempt, null, null, null);
        }
    }

    /** The body that ran on {@code w} returned at {@code t1}: the next task of this run may start there. */
    void taskEndedOn(Worker w, long t1) {
        if (clock) {
            w.taskEndedAt(t1, run.runId());
        }
    }

    /** Task {@code i}'s last attempt ended (returned, reported or timed out) at {@code t1}. */
    void ended(int i, long t1) {
        if (end != null) {
            end[i] = t1;
        }
    }

    boolean wantsRoutine() {
        return bus.wantsRoutine();
    }

    boolean wants(EventType type) {
        return bus.wants(type);
    }

    /** Hands the run's final profile to the listeners ({@code TaskListener.onRunFinished}); never throws. */
    void runFinished(RunProfile profile) {
        if (bus.hasListeners()) {
            UserCode.enter(run.scheduler);
            try {
                bus.runFinished(profile);
            } finally {
                UserCode.exit();
            }
        }
    }

    /** Publishes an event of task {@code i} of the graph (-1: of the run) when anyone wants it; never throws. */
    void publish(
            EventType type,
            int i,
            @Nullable Device device,
            int lane,
            int attempt,
            @Nullable Throwable error,
            @Nullable DeviceDecision decision,
            @Nullable String detail) {
        if (bus.wants(type)) {
            publish(type, i >= 0 ? topology.name(i) : null, i, device, lane, attempt, error, decision, detail);
        }
    }

    /**
     * Publishes an event of the task named {@code name} with index {@code i} (a task of the graph, or
     * one added while the run runs), or of the run (null, -1), when anyone wants it; never throws.
     */
    void publish(
            EventType type,
            @Nullable String name,
            int i,
            @Nullable Device device,
            int lane,
            int attempt,
            @Nullable Throwable error,
            @Nullable DeviceDecision decision,
            @Nullable String detail) {
        if (!bus.wants(type)) {
            return;
        }
        boolean listened = bus.hasListeners(); // listeners are user code
        if (listened) {
            UserCode.enter(run.scheduler);
        }
        try {
            bus.publish(type, run.runId(), topology.name(), name, i, device, lane, attempt, error, decision, detail);
        } finally {
            if (listened) {
                UserCode.exit();
            }
        }
    }

    /**
     * Code that is not the kernel's is about to run on this thread (a retry's predicate or event
     * consumers, a time limiter's, a device backend): a worker's next task must not take the
     * previous task's end as its start. The user's callbacks that {@link UserCode} guards (listeners,
     * {@code whenDone} stages, releases, policies) do the same on entering.
     */
    static void userCodeRuns() {
        if (Thread.currentThread() instanceof Worker w) {
            w.pausedBetweenTasks();
        }
    }

    /**
     * The run's profile: final when {@code finish} is set (every task has ended: it reads the
     * run's own arrays), else a snapshot of the run while it runs (see {@link #snapshot}).
     */
    RunProfile profile(RunStatus status, long finish) {
        if (finish < 0) {
            return snapshot(status);
        }
        return profile(status, finish, start, end, devices, lanes, attempts, run.deps.stateView());
    }

    /**
     * A copy of the run as it is, which stays as it was, and whose states agree with its timings.
     * The workers go on meanwhile, so the copy is made in the order in which a task's facts are
     * written: a start is written after the task became RUNNING, an end before it left RUNNING.
     * The starts are copied first, then the ends, then the states (and the profile reads the clock
     * after all of them, so every copied time is before its end). A task's successors start only
     * after its end was written, so a start seen in the copy is never of a successor of a task
     * whose end the copy missed. Then: a task whose state says it ran but whose start the copy
     * missed had not started (shown READY); one whose state says it ended but whose end the copy
     * missed, or a former attempt's, was running (shown RUNNING); a running task has no end (its
     * entry may hold a former attempt's end, or this one's, written just before it ended).
     */
    private RunProfile snapshot(RunStatus status) {
        int n = topology.size();
        long @Nullable [] starts = start == null ? null : start.clone();
        long @Nullable [] ends = end == null ? null : end.clone();
        java.util.function.IntFunction<TaskState> live = run.deps.stateView();
        TaskState[] states = new TaskState[n];
        for (int i = 0; i < n; i++) {
            states[i] = live.apply(i);
        }
        for (int i = 0; starts != null && ends != null && i < n; i++) {
            TaskState s = states[i];
            if (s == TaskState.RUNNING) {
                ends[i] = 0;
            } else if (starts[i] == 0) {
                if (s == TaskState.SUCCEEDED || s == TaskState.FAILED || s == TaskState.RETRYING) {
                    states[i] = TaskState.READY; // (a CANCELLED task without a start never started)
                }
            } else if (s != TaskState.CREATED && s != TaskState.READY && ends[i] < starts[i]) {
                states[i] = TaskState.RUNNING;
                ends[i] = 0;
            }
        }
        return profile(
                status,
                -1,
                starts,
                ends,
                devices == null ? null : devices.clone(),
                lanes == null ? null : lanes.clone(),
                attempts == null ? null : attempts.clone(),
                i -> states[i]);
    }

    private RunProfile profile(
            RunStatus status,
            long finish,
            long @Nullable [] start,
            long @Nullable [] end,
            byte @Nullable [] devices,
            int @Nullable [] lanes,
            int @Nullable [] attempts,
            java.util.function.IntFunction<TaskState> states) {
        return new RunProfile(
                run.runId(),
                topology,
                status,
                policy,
                submitted,
                submitNanos,
                finish,
                run.pool.parallelism(),
                start,
                end,
                devices,
                lanes,
                attempts,
                states,
                status == RunStatus.SUCCEEDED
                        ? TaskCauses.NONE
                        : TaskCauses.collect(topology.size(), run::errorOf, TaskFailure::describe),
                run.pool.totalSteals() - stealsAtStart,
                run.pool.totalIdleSpins() - idleSpinsAtStart,
                run.attempts.abandoned());
    }

    /** When task {@code i}'s last attempt started, or 0 when not recorded. */
    long startOf(int i) {
        return start == null ? 0 : start[i];
    }

    /** The attempts task {@code i} made: 1 when no task of the graph retries. */
    int attemptsOf(int i) {
        return attempts == null ? 1 : attempts[i];
    }
}
