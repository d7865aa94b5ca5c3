package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceTask;
import io.hts.gpu.cuda.CudaApi;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The completion events of one device's in-flight tasks that others may follow on the device
 * (tasks whose result is a device buffer), for the tasks dispatched to follow them, on this device
 * or a peer.
 *
 * <p><b>Invariants.</b> A task is added, by the thread that drives its device, before its
 * successors hear that its work is enqueued, and removed only after it has been reported to the
 * engine: a follower that finds it absent ({@link #contains}) knows it completed, so a follower
 * is never reported before the task it follows. The map's monitor covers a look-up and the wait
 * enqueued on it ({@link #orderAfter}), so an event is never recycled between them (a stream waits
 * for the record an event had when the wait was enqueued).
 */
final class FollowedWork {

    private final CudaApi api;
    private final Map<DeviceTask, CudaApi.Event> events = Collections.synchronizedMap(new IdentityHashMap<>());

    FollowedWork(CudaApi api) {
        this.api = api;
    }

    void add(DeviceTask task, CudaApi.Event done) {
        events.put(task, done);
    }

    /** After the task was reported: from now on its followers may be reported too. */
    void remove(DeviceTask task) {
        events.remove(task);
    }

    boolean contains(DeviceTask task) {
        return events.containsKey(task);
    }

    /**
     * Makes {@code stream} (of this or another device) wait on the device for a task's work, if it
     * is still in flight here; the host does not block.
     *
     * @return whether the task was in flight here
     */
    boolean orderAfter(DeviceTask predecessor, CudaApi.Stream stream) {
        synchronized (events) {
            CudaApi.Event done = events.get(predecessor);
            if (done == null) {
                return false;
            }
            api.wait(stream, done);
            return true;
        }
    }
}
