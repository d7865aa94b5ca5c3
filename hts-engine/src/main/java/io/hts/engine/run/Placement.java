package io.hts.engine.run;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.internal.PoolTask;
import io.hts.engine.exec.internal.ResourceDemand;
import io.hts.engine.exec.internal.ResourceLimiter;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.DeviceDecision;
import io.hts.engine.observe.EventType;
import io.hts.engine.policy.ReadyOrder;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;
import io.hts.engine.run.internal.RunExtension;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Where a READY attempt goes: the device (the policy is asked only when the task has bodies for
 * more than one), the resources it declares (taken now, or waited for without a thread), and the
 * route (the caller's worker, the pool's priority lane, or the device's backend).
 *
 * <p><b>Waiting for resources.</b> A waiting attempt is registered here by task (a concurrent map
 * written only on this rare path) so that a cancellation can withdraw it from the
 * {@link ResourceLimiter}: the registration is written before the task's state is read again, and
 * the canceller changes the state before it looks the registration up, so one of the two always
 * sees the other and a cancelled task never stays queued for resources. A grant that wins the race
 * against the withdrawal routes an attempt that then fails to start and gives the resources back.
 *
 * <p><b>A GPU root launched by its waiting caller.</b> While the thread of
 * {@code Scheduler.execute} makes a run's roots ready, {@code waitingCaller} names it, and the
 * first GPU attempt it routes is kept in {@code callerAttempt} instead of dispatched; once the
 * other roots went their way, that thread offers the attempt to the backend to launch itself
 * ({@link io.hts.engine.exec.DeviceBackend#dispatchHere}), its body guarded by
 * {@link UserCode#onCaller}; not an attempt with a time limit, whose body the limit may abandon
 * while {@code execute} must return. Both fields are plain: only that thread writes them, and another
 * thread that reads them never finds itself in {@code waitingCaller}. {@code callerAttempt} stays
 * set while the attempt is offered, so that what the launch routes on this thread (successors
 * that follow it on the device) is dispatched, not kept.
 */
final class Placement {

    private final GraphRun run;
    private final ExecutionPlan plan;
    private final Map<Integer, ResourceWait> waits = new ConcurrentHashMap<>();
    /** See the class comment. */
    private @Nullable Thread waitingCaller;

    private @Nullable TaskExecution callerAttempt;

    Placement(GraphRun run) {
        this.run = run;
        this.plan = run.plan;
    }

    /** A root: CREATED to READY, then towards a device. */
    @Nullable
    PoolTask rootReady(int i) {
        if (!run.deps.tryReady(i)) {
            return null;
        }
        return ready(i);
    }

    /** A task just made READY (by its last dependency, or as a root) goes to a device. */
    @Nullable
    PoolTask ready(int i) {
        if (run.recorder.wantsRoutine()) {
            run.recorder.publish(EventType.TASK_READY, i, null, -1, 1, null, null, null);
        }
        return dispatch(new TaskExecution(run, i, 1));
    }

    /**
     * Whether task {@code s}, once its only dependency is done, would go straight to the worker
     * that ran that dependency: a CPU body alone, no resources, not urgent, ready tasks taken in
     * the pool's order, and nobody listening for TASK_READY (which it then never passes through).
     */
    boolean runsAsPlainCpu(int s) {
        return plan.has(s, ExecutionPlan.CONTINUATION) // (never a task an extension owns)
                && !run.recorder.wantsRoutine()
                && readyOrder() != ReadyOrder.SHORTEST_FIRST;
    }

    /**
     * Sends a READY attempt towards a device: decides the device, takes resources (or queues for
     * them), and routes.
     *
     * @return the attempt when the caller should run it on its CPU worker (or submit it), else null
     */
    @Nullable
    PoolTask dispatch(TaskExecution e) {
        RunExtension extension = run.extension;
        if (extension != null && plan.owns(e.index)) {
            if (e.attempt == 1) {
                // its slice decides the member; a slice that runs here comes back through dispatchInSlice
                extension.ready(new AttemptHooks(e));
            } else {
                extension.retry(new AttemptHooks(e)); // alone, where the group's choice gives now
            }
            return null;
        }
        return dispatch(e, chooseDevice(e.index, e.attempt));
    }

    /** An attempt an extension owns that it runs here (a slice on this member): placed as any attempt, and run. */
    void dispatchInSlice(TaskExecution e) {
        PoolTask p = dispatch(e, chooseDevice(e.index, e.attempt));
        if (p != null) {
            run.pool.submit(p);
        }
    }

    /**
     * Sends a READY attempt of a task with a CPU body to the CPU, whatever the policy would choose
     * (its previous attempt cost its device).
     *
     * @return the attempt when the caller should run it on its CPU worker (or submit it), else null
     */
    @Nullable
    PoolTask dispatchOnCpu(TaskExecution e, String why) {
        run.recorder.publish(EventType.TASK_PLACED, e.index, Device.CPU, -1, e.attempt, null, null, why);
        return dispatch(e, Device.CPU);
    }

    private @Nullable PoolTask dispatch(TaskExecution e, @Nullable Device device) {
        int i = e.index;
        if (device == null) {
            return null;
        }
        ResourceDemand demand = device == Device.CPU && plan.gpuMemoryDemand(i) != null
                ? plan.cpuDemand(i)
                : plan.demand(i); // GPU memory is not held by a CPU run
        if (demand != null
                && device == Device.GPU
                && run.scheduler.memoryShortage() == MemoryShortage.RUN_ON_CPU
                && plan.has(i, ExecutionPlan.CPU)
                && demand.amount(TaskBuilder.GPU_MEMORY) > 0) {
            if (demand.limiter().tryAcquire(demand)) {
                e.hold(demand);
                return route(e, device);
            }
            run.recorder.publish(
                    EventType.TASK_PLACED,
                    i,
                    Device.CPU,
                    -1,
                    e.attempt,
                    null,
                    null,
                    "the "
                            + demand.amount(TaskBuilder.GPU_MEMORY) + " bytes of GPU memory it declares are not free ("
                            + free(demand) + "); running its CPU body instead of waiting");
            device = Device.CPU;
            demand = plan.cpuDemand(i);
        }
        if (demand != null) {
            ResourceWait wait = new ResourceWait(e, device, demand);
            ResourceLimiter.Waiting waiting = demand.limiter().acquireOrWait(demand, wait);
            if (waiting != null) {
                wait.waiting = waiting;
                waits.put(i, wait);
                if (wait.granted) {
                    waits.remove(i, wait); // granted before it was registered
                }
                run.recorder.publish(
                        EventType.TASK_WAITING,
                        i,
                        device,
                        -1,
                        e.attempt,
                        null,
                        null,
                        "waiting for resources " + demand + " (free: " + free(demand) + ")");
                if (!run.deps.is(i, TaskState.READY)) {
                    withdrawWait(i); // cancelled while it queued
                }
                return null;
            }
            e.hold(demand);
        }
        return route(e, device);
    }

    /** A cancelled task's attempt stops waiting for resources, if it waits. */
    void withdrawWait(int i) {
        if (waits.isEmpty()) {
            return;
        }
        ResourceWait wait = waits.remove(i);
        if (wait != null && wait.waiting != null) {
            wait.waiting.cancel(); // false: the grant won; the attempt then fails to start and releases
        }
    }

    /** Sends an attempt whose device and resources are settled: to the caller (CPU), the priority lane, or the backend. */
    @Nullable
    PoolTask route(TaskExecution e, Device device) {
        int i = e.index;
        e.device = device;
        if (device == Device.GPU) {
            DeviceBackend gpu = run.scheduler.gpuBackend();
            if (gpu == null) {
                run.attempts.releaseHeld(e);
                run.propagation.failUnstarted(
                        i,
                        new NoDeviceException("task '" + run.topology.name(i)
                                + "' was placed on the GPU but the scheduler has no GPU backend"),
                        device,
                        e.attempt);
                return null;
            }
            if (waitingCaller == Thread.currentThread() && callerAttempt == null && !plan.has(i, ExecutionPlan.TIMED)) {
                // (a timed attempt is not: a caller running a body its time limit abandoned could not return)
                callerAttempt = e; // launched by the caller once the other roots are dispatched
                return null;
            }
            dispatchTo(gpu, e, false);
            return null;
        }
        if (plan.has(i, ExecutionPlan.URGENT) || readyOrder() == ReadyOrder.SHORTEST_FIRST) {
            long cost = plan.estimate(i, Device.CPU);
            run.pool.submitPriority(e, run.graph.task(i).priority(), cost < 0 ? Long.MAX_VALUE : cost);
            return null;
        }
        return e;
    }

    /**
     * Hands an attempt to the device backend: offered to launch on this thread first when
     * {@code here}, else (or when the backend declines) dispatched.
     */
    private void dispatchTo(DeviceBackend gpu, TaskExecution e, boolean here) {
        RunRecorder.userCodeRuns(); // a backend's code (dispatchHere may run the body on this thread)
        try {
            if (!here || !gpu.dispatchHere(e)) {
                gpu.dispatch(e);
            }
        } catch (Throwable ex) {
            // A backend must not throw; if it does, the attempt fails as if the backend had
            // reported the throw: not started, it fails unstarted; started (a backend that runs
            // tasks inline), it ends as a failed attempt; already reported, nothing changes.
            run.attempts.reported(e, null, ex);
        }
    }

    /** The caller of {@code Scheduler.execute} begins to make the roots ready (see the class comment). */
    void callerStarts() {
        waitingCaller = Thread.currentThread();
    }

    /** The roots are dispatched: the caller offers the GPU attempt it kept to the backend, to launch it here. */
    void callerStarted() {
        TaskExecution e = callerAttempt;
        try {
            DeviceBackend gpu = run.scheduler.gpuBackend();
            if (e != null && gpu != null) {
                dispatchTo(gpu, e, true);
            }
        } finally {
            callerAttempt = null;
            waitingCaller = null;
        }
    }

    /** Whether this thread is the waiting caller launching a GPU root itself (its body is then guarded). */
    boolean onWaitingCaller() {
        return waitingCaller == Thread.currentThread();
    }

    /** The device for a ready task; consults the policy only when there is a real choice. */
    private @Nullable Device chooseDevice(int i, int attempt) {
        boolean cpu = plan.has(i, ExecutionPlan.CPU);
        boolean gpu = plan.has(i, ExecutionPlan.GPU);
        if (cpu && !gpu) {
            return Device.CPU;
        }
        SystemStatus status = run.scheduler.systemStatus();
        boolean gpuUsable = gpu && status.usable(Device.GPU);
        if (!cpu) {
            if (gpuUsable) {
                return Device.GPU;
            }
            var s = status.status(Device.GPU);
            run.propagation.failUnstarted(
                    i,
                    new NoDeviceException(
                            "task '" + run.topology.name(i) + "' has only a" + " GPU body and the GPU backend is "
                                    + (s == null ? "absent" : s.health() + ": " + s.detail())),
                    null,
                    attempt);
            return null;
        }
        if (!gpuUsable) {
            return Device.CPU;
        }
        SchedulingPolicy policy = run.scheduler.policy();
        Task<?> task = run.graph.task(i);
        TaskInfo info = new TaskInfo(
                task.name(),
                task.statisticsName(),
                Scheduler.BOTH,
                task.priority(),
                plan.estimate(i, Device.CPU),
                plan.estimate(i, Device.GPU));
        Device chosen;
        try {
            chosen = UserCode.call(run.scheduler, () -> policy.selectDevice(info, status));
        } catch (Throwable ex) {
            run.scheduler.policyFailed(policy, ex);
            chosen = null;
        }
        Device used = chosen == Device.GPU || chosen == Device.CPU ? chosen : Device.CPU;
        if (run.recorder.wants(EventType.TASK_PLACED)) {
            run.recorder.publish(
                    EventType.TASK_PLACED,
                    i,
                    used,
                    -1,
                    0,
                    null,
                    new DeviceDecision(policy.name(), info, status, chosen == null ? used : chosen, used),
                    null);
        }
        return used;
    }

    /** The policy's order of ready CPU tasks; a policy that throws gets the default order. */
    private ReadyOrder readyOrder() {
        ActivePolicy active = run.scheduler.activePolicy();
        SchedulingPolicy policy = active.policy();
        if (active.builtIn()) {
            return policy.readyOrder(); // a constant of ours: no user code, no guard on the hot path
        }
        try {
            return UserCode.call(run.scheduler, policy::readyOrder);
        } catch (Throwable ex) {
            run.scheduler.policyFailed(policy, ex);
            return ReadyOrder.PRIORITY;
        }
    }

    /** The free amounts of the resources a demand names, for messages. */
    static String free(ResourceDemand d) {
        StringBuilder sb = new StringBuilder("{");
        boolean first = true;
        for (String name : d.limiter().names()) {
            if (d.amount(name) > 0) {
                sb.append(first ? "" : ", ")
                        .append(name)
                        .append('=')
                        .append(d.limiter().available(name));
                first = false;
            }
        }
        return sb.append('}').toString();
    }

    /** An attempt waiting for its resources; the limiter runs it once they are taken for it. */
    private final class ResourceWait implements Runnable {

        final TaskExecution attempt;
        final Device device;
        final ResourceDemand demand;
        volatile ResourceLimiter.@Nullable Waiting waiting;
        volatile boolean granted;

        ResourceWait(TaskExecution attempt, Device device, ResourceDemand demand) {
            this.attempt = attempt;
            this.device = device;
            this.demand = demand;
        }

        /**
         * The resources were taken for the attempt: it goes on, on the releasing thread (which may be
         * ending another task: nothing here may throw into it).
         */
        @Override
        public void run() {
            granted = true;
            waits.remove(attempt.index, this);
            attempt.hold(demand);
            try {
                PoolTask t = route(attempt, device);
                if (t != null) {
                    run.pool.submit(t);
                }
            } catch (Throwable ex) { // the pool refused it (shut down), or a backend threw: the attempt cannot run
                if (attempt.withdraw()) {
                    run.attempts.releaseHeld(attempt);
                    run.propagation.failUnstarted(attempt.index, ex, device, attempt.attempt);
                }
            }
        }
    }
}
