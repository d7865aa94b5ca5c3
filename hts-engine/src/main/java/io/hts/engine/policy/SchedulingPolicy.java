package io.hts.engine.policy;

import io.hts.engine.graph.Device;

/**
 * Chooses the device for a ready task. Consulted only when the choice is real: the task has a
 * body for more than one device and more than one of those devices is usable. A custom policy is
 * any implementation (with Spring, any bean of this type).
 *
 * <p>Implementations must be thread-safe and fast: they are called on the scheduling path.
 */
public interface SchedulingPolicy {

    /** The policy's name, shown in events and metrics. */
    String name();

    /**
     * Picks the device for a task.
     *
     * @param task the ready task
     * @param status the devices' load
     * @return a device the task has a body for; anything else falls back to the first usable one
     */
    Device selectDevice(TaskInfo task, SystemStatus status);

    /** How ready CPU tasks are ordered under this policy. */
    default ReadyOrder readyOrder() {
        return ReadyOrder.PRIORITY;
    }
}
