package io.hts.engine.cluster;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A unit of remote work: members {@code [from, to)} of a distributed group of a graph every member
 * registered by name. Never a closure: the worker runs the bodies of its own copy of the graph.
 *
 * @param graph the graph's name, as registered on every member
 * @param fingerprint the coordinator's {@link GraphFingerprint} of the graph; a worker whose copy
 *     differs refuses the slice
 * @param group the distributed group's name
 * @param from the first member's index
 * @param to one past the last member's index
 * @param coordinator the id of the member that owns the run
 * @param runId the run's id on the coordinator
 * @param attempt the delivery's number among its run's deliveries of the group, from 1: a slice
 *     sent again after its member was lost, or a member's retry sent alone, has a higher one, so no
 *     two deliveries of a run share it
 * @param timeLimit how long the coordinator still waits for the slice when it sends it (the
 *     members' time limit), or {@code null} for no limit; a duration, not an instant, since the
 *     members' clocks differ
 * @param inputs the results of the tasks the slice's members depend on, by task name
 * @param skipped the members of {@code [from, to)} the worker must not run (cancelled before the
 *     slice went): it answers {@code null} for them
 */
public record SliceWork(
        String graph,
        String fingerprint,
        String group,
        int from,
        int to,
        String coordinator,
        long runId,
        int attempt,
        @Nullable Duration timeLimit,
        Map<String, Payload> inputs,
        Set<Integer> skipped) {

    /** Checks the values and copies the inputs and the members skipped. */
    public SliceWork {
        Objects.requireNonNull(graph, "graph");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(coordinator, "coordinator");
        if (from < 0 || to <= from) {
            throw new IllegalArgumentException("slice of group '" + group + "' of graph '" + graph
                    + "': [from, to) must hold at least one member, was [" + from + ", " + to + ")");
        }
        if (attempt < 1) {
            throw new IllegalArgumentException(
                    "slice [" + from + ", " + to + ") of group '" + group + "': attempt counts from 1, was " + attempt);
        }
        inputs = Map.copyOf(inputs);
        skipped = Set.copyOf(skipped);
        for (int k : skipped) {
            if (k < from || k >= to) {
                throw new IllegalArgumentException("slice [" + from + ", " + to + ") of group '" + group
                        + "': a member skipped must be in the slice, was " + k);
            }
        }
        if (skipped.size() == to - from) {
            throw new IllegalArgumentException(
                    "slice [" + from + ", " + to + ") of group '" + group + "': every member is skipped");
        }
    }

    /** The number of members in the slice. */
    public int size() {
        return to - from;
    }

    @Override
    public String toString() {
        return "slice [" + from + ", " + to + ") of group '" + group + "' of graph '" + graph + "' (run " + runId
                + " of " + coordinator + ", attempt " + attempt + ")";
    }
}
