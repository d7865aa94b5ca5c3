package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceTask;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.stream.StreamLease;
import org.jspecify.annotations.Nullable;

/**
 * One task whose device work is enqueued and not yet seen complete: what its completion needs.
 * Owned by the device's launcher thread, which creates, polls and finishes it.
 */
final class InFlight {

    final DeviceTask task;
    final GpuContext ctx;
    final StreamLease lease;
    /** Recorded on the task's stream after its work; null when recording failed. */
    final CudaApi.@Nullable Event event;

    final @Nullable Object result;

    @Nullable
    Throwable error;

    final long startNanos;
    /** Device time of tasks of this name: {mean, mean absolute deviation} ({@link DeviceTimes}). */
    final long[] times;
    /** Whether a completion callback will wake the launcher for this task. */
    final boolean callback;
    /** Whether successors were told its work is enqueued, so that they may follow it on the device. */
    final boolean followable;
    /** Whether the scheduler took its result for followers: then the run, not the backend, releases it. */
    boolean handedOut;
    /** Whether its device work could not be followed to its end: its stream and memory are never reused. */
    boolean keepResources;

    InFlight(
            DeviceTask task,
            GpuContext ctx,
            StreamLease lease,
            CudaApi.@Nullable Event event,
            @Nullable Object result,
            @Nullable Throwable error,
            long startNanos,
            long[] times,
            boolean callback,
            boolean followable) {
        this.task = task;
        this.ctx = ctx;
        this.lease = lease;
        this.event = event;
        this.result = result;
        this.error = error;
        this.startNanos = startNanos;
        this.times = times;
        this.callback = callback;
        this.followable = followable;
    }

    /** {@code first} with {@code next} added as suppressed, or {@code next} when there is no first. */
    static Throwable merge(@Nullable Throwable first, Throwable next) {
        if (first == null) {
            return next;
        }
        if (first != next) {
            first.addSuppressed(next);
        }
        return first;
    }
}
