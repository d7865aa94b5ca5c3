package io.hts.cluster;

import java.time.Duration;
import java.util.Objects;

/**
 * The Hazelcast structures {@link HazelcastClusterEngine} uses, and how often it publishes this
 * member's load. Every member of one HTS cluster must use the same names.
 *
 * @param executorName the {@code IExecutorService} slices run through; its pool size (Hazelcast's
 *     {@code ExecutorConfig}, 16 by default) bounds the slices a member serves at once, since one
 *     executor thread waits for each
 * @param membersMap the map of member statuses (capacity, health, load), by member UUID
 * @param payloadMap the map of large payloads
 * @param payloadTimeToLive how long a stored payload lives when nobody deletes it (a coordinator
 *     lost mid-run)
 * @param statusInterval how often this member publishes its load
 */
public record HazelcastClusterOptions(
        String executorName,
        String membersMap,
        String payloadMap,
        Duration payloadTimeToLive,
        Duration statusInterval) {

    /** Checks the values. */
    public HazelcastClusterOptions {
        Objects.requireNonNull(executorName, "executorName");
        Objects.requireNonNull(membersMap, "membersMap");
        Objects.requireNonNull(payloadMap, "payloadMap");
        Objects.requireNonNull(payloadTimeToLive, "payloadTimeToLive");
        Objects.requireNonNull(statusInterval, "statusInterval");
        for (String name : new String[] {executorName, membersMap, payloadMap}) {
            if (name.isBlank()) {
                throw new IllegalArgumentException(
                        "the names of HTS's Hazelcast structures must not be blank (executor '" + executorName
                                + "', members map '" + membersMap + "', payload map '" + payloadMap + "')");
            }
        }
        if (payloadTimeToLive.toSeconds() < 1) {
            throw new IllegalArgumentException(
                    "payloadTimeToLive must be at least 1 s (Hazelcast's resolution), was " + payloadTimeToLive);
        }
        if (statusInterval.toMillis() < 10) {
            throw new IllegalArgumentException("statusInterval must be at least 10 ms, was " + statusInterval);
        }
    }

    /** {@code hts-slices}, {@code hts-members}, {@code hts-payloads}, 10 minutes, 1 second. */
    public static HazelcastClusterOptions defaults() {
        return new HazelcastClusterOptions(
                "hts-slices", "hts-members", "hts-payloads", Duration.ofMinutes(10), Duration.ofSeconds(1));
    }
}
