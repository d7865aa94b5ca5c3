package io.hts.engine.exec;

import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceStatus;
import java.util.List;

/**
 * The service-provider interface of an execution backend for a device other than the CPU (the GPU
 * backend of {@code hts-gpu} implements it). The CPU is always served by the
 * scheduler's own work-stealing pool.
 *
 * <p>The scheduler hands the backend each task the policy placed on its device with
 * {@link #dispatch}. The backend runs the task's {@code GpuBody} when it has a slot (a stream) and
 * reports the outcome exactly once through {@link DeviceTask#complete} or {@link DeviceTask#fail},
 * from any thread. It must not block the dispatching thread (a CPU worker).
 */
public interface DeviceBackend extends AutoCloseable {

    /** The device kind this backend serves. */
    Device device();

    /** A human-readable name, e.g. {@code cuda:0 NVIDIA H200}. */
    String name();

    /**
     * The backend's current load and health, as the policies see it. Called on the scheduling
     * path: must be cheap and must not block.
     */
    DeviceStatus status();

    /**
     * One status per physical device this backend runs: its own for a single device, one per GPU
     * for a backend over the GPUs of a host. For operators (Actuator); the policies use
     * {@link #status()}.
     */
    default List<DeviceStatus> deviceStatuses() {
        return List.of(status());
    }

    /**
     * Accepts a task for execution. Must return promptly; the work happens asynchronously.
     *
     * @param task the task
     */
    void dispatch(DeviceTask task);

    /**
     * Called when a run is cancelled; the backend may stop queued tasks of that run early (they
     * then fail or complete as usual). The default does nothing: the tasks see
     * {@link DeviceTask#isCancelled()}.
     *
     * @param runId the run
     */
    default void onRunCancelled(long runId) {}

    /**
     * Lets a thread that waits for a run with device tasks (outside the scheduler's workers) do the
     * backend's work meanwhile: launch what is queued, see what completed. Called in a loop by
     * {@code GraphRun.await}; must not block. A backend whose own thread launches and polls can
     * thus skip the two thread hand-offs (to its thread, and back to the waiter) that a one-task run
     * would otherwise pay.
     *
     * @return {@code true} while the device has work queued or in flight that this thread may keep
     *     helping with (the waiter then spins); {@code false} when it should block instead (the
     *     default: nothing to help with, or another waiter already helps)
     */
    default boolean assist() {
        return false;
    }

    /**
     * Whether the calling thread is doing this backend's device work now (its own thread, or a
     * waiter inside {@link #assist}): running a GPU body or a completion. Such a thread must not
     * block for device work (a run's end, the scheduler's termination): it would wait for itself.
     *
     * @return {@code false} by default
     */
    default boolean isDeviceThread() {
        return false;
    }

    /**
     * Like {@link #dispatch}, offered on the thread of a caller that waits for the task's run right
     * after, without a deadline ({@code Scheduler.execute}), once the run's other roots were
     * dispatched; never a task with a time limit (its caller must return when the limit abandons
     * the body). A backend whose own thread is not launching may launch the task on this thread,
     * running its body here: that spares the hand-off to the backend's thread, which costs a
     * thread wake-up and a cold core (tens to hundreds of microseconds on virtual machines, more
     * than a small GPU operation takes). The engine keeps the caller's interrupt status from the
     * body and settles it after, as it does for callbacks on callers' threads.
     *
     * @param task the task
     * @return whether the backend took the task (launched, queued or reported it); {@code false}
     *     (the default): it did nothing with it, and the engine then calls {@link #dispatch}
     */
    default boolean dispatchHere(DeviceTask task) {
        return false;
    }

    /** Releases the backend's resources. The scheduler closes the backends it was given. */
    @Override
    default void close() {}
}
