package io.hts.engine.exec;

import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.TaskContext;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of a task, as a {@link DeviceBackend} receives it.
 */
public interface DeviceTask {

    /** The task's name. */
    String taskName();

    /** The run the attempt belongs to. */
    long runId();

    /** The attempt number, from 1. */
    int attempt();

    /** The GPU body to run. */
    GpuBody<?> gpuBody();

    /**
     * The task context (inputs, cancellation); the backend wraps it into the
     * {@code GpuTaskContext} it passes to the body.
     */
    TaskContext context();

    /**
     * The attempt's deadline on the {@link System#nanoTime()} clock, or {@link Long#MAX_VALUE}
     * when it has no time limit. A backend that completes work asynchronously (CUDA events) should
     * fail the attempt with a {@code TimeoutException} when the deadline passes, and keep its
     * device resources until the device work has really finished.
     */
    long deadlineNanos();

    /** Whether the run or the task has been cancelled. */
    boolean isCancelled();

    /**
     * Marks the attempt as started on a lane of the device (a stream), just before the backend
     * runs the body. Returns {@code false} when the task was cancelled while queued, or was handed
     * back with {@link #fallBackToCpu} (or started) before: the backend then drops it without
     * running the body and without calling {@link #complete} or {@link #fail}.
     *
     * @param lane the stream (or similar) index
     * @return whether the backend should run the body
     */
    boolean start(int lane);

    /**
     * The GPU this task is pinned to ({@code TaskBuilder.onGpu}), or -1 when any will do.
     */
    default int gpuOrdinal() {
        return -1;
    }

    /**
     * The results of the task's direct dependencies, in declaration order, for a backend that places
     * the task where its data already is (a device buffer's device). Results not yet produced (a
     * predecessor still on a device) are there as soon as the predecessor's work was enqueued.
     */
    default List<@Nullable Object> inputs() {
        return List.of();
    }

    /**
     * The device tasks of the same run whose device work this one must follow: non-empty only for a
     * task the scheduler dispatched before its GPU predecessors completed (they were enqueued on
     * this backend). The backend orders this task's work after theirs on the device (an event
     * waited on by its stream) and reports this task's completion only after theirs.
     */
    default List<DeviceTask> awaitOnDevice() {
        return List.of();
    }

    /**
     * Reports that the body has returned and its work is enqueued on the device, not yet
     * completed; {@code result} is what the body returned. The scheduler may then dispatch
     * successors that depend only on enqueued device work (see {@link #awaitOnDevice()}), and they
     * read {@code result} before this task completes. A backend must therefore call it only when
     * {@code result} is device-resident and complete as far as work ordered after this task's on
     * the device can tell (a device buffer), never for a value its completion still fills (a host
     * array a download lands in): no task may observe a predecessor's result before that
     * predecessor completed otherwise. A backend that never calls it gets every task only after
     * its predecessors completed.
     *
     * @param result the body's result
     * @return whether the scheduler took the result for successors that follow on the device: it
     *     then also releases it (a {@code Releasable}) if this attempt fails, once those successors
     *     have ended, so the backend must not release it itself; {@code false} (the default): the
     *     result went to nobody yet, and a failed attempt's result is the backend's to release
     */
    default boolean enqueued(@Nullable Object result) {
        return false;
    }

    /**
     * Hands a task that has not started back to the scheduler to run on the CPU instead, when it
     * has a CPU body (a backend that went DOWN with tasks still queued). The backend then forgets
     * the task: no {@link #start}, {@link #complete} or {@link #fail} follows.
     *
     * @param reason why the device cannot run it, recorded in the task's placement event
     * @return {@code true} when the task now runs on the CPU (or was cancelled meanwhile: either
     *     way the backend forgets it); {@code false} when it has no CPU body, or when it is not the
     *     backend's to hand back (it was started already, or handed back or reported before): the
     *     backend then fails it, which ends a started task FAILED and is ignored otherwise
     */
    boolean fallBackToCpu(String reason);

    /**
     * Reports success. Exactly one of {@code complete} and {@link #fail} may be called.
     *
     * @param result the result
     */
    void complete(@Nullable Object result);

    /**
     * Reports failure.
     *
     * @param error the cause
     */
    void fail(Throwable error);

    /**
     * Reports failure with an error that took the device out of service for good (a sticky CUDA
     * error poisoned its context): the scheduler does not retry the task on this device. A task
     * with a CPU body whose retry configuration allows another attempt retries on the CPU; any other
     * ends FAILED with {@code error}, which thus stays the task's cause (and its run's first
     * failure when it came first) instead of a refusal by the device its retry would meet. Counts
     * as the one report, like {@link #fail}.
     *
     * @param error the cause
     */
    default void failDeviceLost(Throwable error) {
        fail(error);
    }
}
