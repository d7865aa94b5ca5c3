package io.hts.engine.cluster;

import java.util.Map;
import java.util.Objects;

/**
 * What a worker member answers for a slice.
 *
 * @param member the id of the member that ran it
 * @param results the encoded {@code List} of the members' results in index order ({@code null}
 *     where a member failed)
 * @param failures the members that failed, by index in the group
 * @param bodyNanos the time the slice's CPU bodies ran, summed; the coordinator learns the group's
 *     CPU cost from it when every member ran on the CPU
 * @param gpuMembers how many of the slice's members the worker ran on a GPU (its policy's choice
 *     for members with both bodies)
 */
public record SliceResult(
        String member, Payload results, Map<Integer, RemoteFailure> failures, long bodyNanos, int gpuMembers) {

    /** Checks the values and copies the failures. */
    public SliceResult {
        Objects.requireNonNull(member, "member");
        Objects.requireNonNull(results, "results");
        failures = Map.copyOf(failures);
        if (bodyNanos < 0 || gpuMembers < 0) {
            throw new IllegalArgumentException(
                    "bodyNanos and gpuMembers must be 0 or more, were " + bodyNanos + " and " + gpuMembers);
        }
    }

    /**
     * A body that failed on a worker, as text: exceptions do not travel (their classes need not be
     * on the coordinator's class path, nor allowed by its codec).
     *
     * @param task the task's name
     * @param exceptionClass the exception's class name
     * @param message its message, or empty
     * @param stackTrace its stack trace as printed on the worker
     */
    public record RemoteFailure(String task, String exceptionClass, String message, String stackTrace) {

        /** Checks the values. */
        public RemoteFailure {
            Objects.requireNonNull(task, "task");
            Objects.requireNonNull(exceptionClass, "exceptionClass");
            Objects.requireNonNull(message, "message");
            Objects.requireNonNull(stackTrace, "stackTrace");
        }
    }
}
