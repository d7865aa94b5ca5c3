package io.hts.engine.observe;

import io.hts.engine.graph.Device;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A state change of a task or a run.
 *
 * @param sequence a number increasing with every event of the scheduler, usable as a cursor
 * @param nanoTime when it happened, on the {@link System#nanoTime()} clock
 * @param time when it happened, wall clock
 * @param type what happened
 * @param runId the run
 * @param graphName the graph's name
 * @param taskName the task's name, {@code null} for run events
 * @param taskIndex the task's index in its graph, -1 for run events
 * @param device the device, when known
 * @param worker the CPU worker or GPU stream, -1 when not applicable
 * @param attempt the attempt number, 0 when not applicable
 * @param error the failure, for failed, retrying, timed-out and cancelled tasks and failed runs
 * @param decision the policy's decision, for {@link EventType#TASK_PLACED}
 * @param detail a human-readable note
 */
public record TaskEvent(
        long sequence,
        long nanoTime,
        Instant time,
        EventType type,
        long runId,
        String graphName,
        @Nullable String taskName,
        int taskIndex,
        @Nullable Device device,
        int worker,
        int attempt,
        @Nullable Throwable error,
        @Nullable DeviceDecision decision,
        @Nullable String detail) {

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder()
                .append('#')
                .append(sequence)
                .append(' ')
                .append(type)
                .append(" run=")
                .append(runId)
                .append(" graph=")
                .append(graphName);
        if (taskName != null) {
            sb.append(" task=").append(taskName);
        }
        if (device != null) {
            sb.append(" device=").append(device.id());
        }
        if (attempt > 0) {
            sb.append(" attempt=").append(attempt);
        }
        if (error != null) {
            sb.append(" error=").append(error);
        }
        if (detail != null) {
            sb.append(" (").append(detail).append(')');
        }
        return sb.toString();
    }
}
