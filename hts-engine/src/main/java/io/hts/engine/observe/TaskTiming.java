package io.hts.engine.observe;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.TaskState;
import org.jspecify.annotations.Nullable;

/**
 * One task of one run, as the profiler saw it. Times are nanoseconds from the run's submission.
 *
 * @param index the task's index in its graph
 * @param taskName the task's name
 * @param statisticsName the name its statistics aggregate under
 * @param state its final (or current) state
 * @param device where its last attempt ran, {@code null} when it never started
 * @param lane the CPU worker or GPU stream of its last attempt, -1 when it never started,
 *     {@link #REMOTE_LANE} when it ran on another member of the cluster (a distributed group's slice;
 *     that member's own profile has its lane)
 * @param attempts how many attempts started
 * @param readyNanos when its dependencies were done (the latest end among them; 0 for roots)
 * @param startNanos when its last attempt started, -1 when it never started
 * @param endNanos when its last attempt ended, -1 when it has not ended
 * @param cause why it FAILED (its last attempt's failure) or was CANCELLED (the failure upstream,
 *     or the cancel), as text; {@code null} for any other state
 */
public record TaskTiming(
        int index,
        String taskName,
        String statisticsName,
        TaskState state,
        @Nullable Device device,
        int lane,
        int attempts,
        long readyNanos,
        long startNanos,
        long endNanos,
        @Nullable String cause) {

    /** The {@code lane} of an attempt that ran on another member of the cluster. */
    public static final int REMOTE_LANE = -3;

    /** Whether its last attempt ran on another member of the cluster ({@link #REMOTE_LANE}). */
    public boolean remote() {
        return lane == REMOTE_LANE;
    }

    /** Whether the task ran (at least its last attempt started and ended). */
    public boolean ran() {
        return startNanos >= 0 && endNanos >= startNanos;
    }

    /** The duration of its last attempt, 0 when it did not run. */
    public long durationNanos() {
        return ran() ? endNanos - startNanos : 0;
    }

    /** How long it waited between being ready and starting, 0 when it did not run. */
    public long waitNanos() {
        return startNanos >= 0 ? Math.max(0, startNanos - readyNanos) : 0;
    }
}
