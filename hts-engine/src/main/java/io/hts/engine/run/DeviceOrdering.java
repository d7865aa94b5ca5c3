package io.hts.engine.run;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * Device-ordered successors: a GPU-only task whose predecessors are all GPU-only tasks without
 * retries or time limits ({@link ExecutionPlan#CHAINED}) is dispatched as soon as its
 * predecessors' work is enqueued on the device, before it completes; the backend orders its work
 * after theirs with events and completes it only after them.
 *
 * <p>Per chained task, {@code notEnqueued} counts the predecessors whose work is not enqueued yet;
 * the decrement that reaches zero (one atomic operation) then races the task's other ways to
 * become READY with {@link DependencyManager#tryReady}, so it is dispatched at most once. Per task,
 * {@code onDevice} keeps its enqueued attempt for the successors to follow. When a predecessor
 * fails or is cancelled, the successors already dispatched to follow it are cancelled with it.
 */
final class DeviceOrdering {

    private final GraphRun run;
    private final GraphTopology topology;
    private final ExecutionPlan plan;
    private final @Nullable AtomicIntegerArray notEnqueued;
    private final @Nullable AtomicReferenceArray<TaskExecution> onDevice;

    DeviceOrdering(GraphRun run) {
        this.run = run;
        this.topology = run.topology;
        this.plan = run.plan;
        if (plan.anyChained) {
            int slots = topology.slots();
            AtomicIntegerArray waiting = new AtomicIntegerArray(slots);
            for (int i = 0, n = topology.size(); i < n; i++) {
                if (plan.has(i, ExecutionPlan.CHAINED)) {
                    waiting.set(topology.slot(i), topology.inDegree(i));
                }
            }
            this.notEnqueued = waiting;
            this.onDevice = new AtomicReferenceArray<>(slots);
        } else {
            this.notEnqueued = null;
            this.onDevice = null;
        }
    }

    /**
     * A device attempt's work is enqueued (its body returned): a chained successor whose
     * predecessors are now all enqueued or done is dispatched at once, to follow their work on the
     * device. Runs on the backend's thread, before the attempt can complete.
     */
    boolean enqueued(TaskExecution e, @Nullable Object result) {
        AtomicIntegerArray waiting = notEnqueued;
        AtomicReferenceArray<TaskExecution> attempts = onDevice;
        if (waiting == null || attempts == null || run.state.stopCause() != null || !anyChainedSuccessor(e.index)) {
            return false;
        }
        int i = e.index;
        run.storeResult(i, result); // chained successors read it before this task completes
        ResultLifetimes lifetimes = run.lifetimes;
        if (lifetimes != null) {
            lifetimes.handedOut(i, result); // released by the run even if this attempt fails
        }
        attempts.set(topology.slot(i), e);
        for (int k = topology.successorStart(i), stop = topology.successorEnd(i); k < stop; k++) {
            int s = topology.successor(k);
            if (!plan.has(s, ExecutionPlan.CHAINED)
                    || waiting.decrementAndGet(topology.slot(s)) != 0
                    || !run.deps.tryReady(s)) {
                continue;
            }
            List<DeviceTask> follow = new ArrayList<>();
            for (int q = topology.predecessorStart(s), end = topology.predecessorEnd(s); q < end; q++) {
                int p = topology.predecessor(q);
                TaskExecution a = attempts.get(topology.slot(p));
                if (a != null && !run.deps.is(p, TaskState.SUCCEEDED)) {
                    follow.add(a);
                }
            }
            if (run.recorder.wantsRoutine()) {
                run.recorder.publish(
                        EventType.TASK_READY,
                        s,
                        Device.GPU,
                        -1,
                        1,
                        null,
                        null,
                        "dispatched to follow the device work of " + follow.size() + " predecessor(s)");
            }
            TaskExecution next = new TaskExecution(run, s, 1);
            next.follows(List.copyOf(follow));
            run.placement.route(next, Device.GPU);
        }
        return true;
    }

    private boolean anyChainedSuccessor(int i) {
        for (int k = topology.successorStart(i), stop = topology.successorEnd(i); k < stop; k++) {
            if (plan.has(topology.successor(k), ExecutionPlan.CHAINED)) {
                return true;
            }
        }
        return false;
    }

    /** Task {@code i} failed or was cancelled: chained successors already dispatched on its work are cancelled too. */
    void cancelFollowers(int i, Throwable cause) {
        if (notEnqueued == null) {
            return;
        }
        for (int k = topology.successorStart(i), stop = topology.successorEnd(i); k < stop; k++) {
            int s = topology.successor(k);
            if (plan.has(s, ExecutionPlan.CHAINED)
                    && (run.deps.is(s, TaskState.READY) || run.deps.is(s, TaskState.RUNNING))) {
                run.propagation.cancelTask(
                        s,
                        new TaskCancelledException(
                                "cancelled because task '" + topology.name(i)
                                        + "', whose device work it followed, did not succeed",
                                cause));
            }
        }
    }
}
