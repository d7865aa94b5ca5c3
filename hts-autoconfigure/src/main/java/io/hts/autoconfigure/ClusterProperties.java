package io.hts.autoconfigure;

import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.cluster.JavaSerializationCodec;
import io.hts.engine.cluster.PayloadCodec;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.util.unit.DataSize;

/**
 * Running distributed groups across the members of a cluster (module hts-cluster, on the
 * application's Hazelcast member), under {@code hts.cluster.*}: a group of {@link HtsProperties}.
 */
public class ClusterProperties {

    /**
     * Whether the scheduler runs distributed groups across the members of the cluster, on the
     * application's HazelcastInstance (a Hazelcast member, such as Spring Boot's spring-boot-hazelcast
     * makes from a Config bean or hazelcast.yaml) and hts-cluster on the class path; start-up fails,
     * saying which is missing, without them.
     */
    private boolean enabled;

    /**
     * Inputs and results of a distributed group up to this size travel with their slice; larger ones
     * go through the cluster's payload store, by reference. 0B: every payload by reference.
     */
    private DataSize inlineLimit = DataSize.ofKilobytes(64);

    /**
     * The cost of one remote round trip, which slices must dwarf: 0.8 ms measured on loopback; more
     * between hosts (measure yours, docs/cluster.md).
     */
    private Duration roundTrip = Duration.ofNanos(800_000);

    /**
     * The share of a slice's time a round trip may take, above 0 and below 1: a slice holds about
     * round-trip / overhead of work once the cost of the group's members is known.
     */
    private double overhead = 0.05;

    /** How many members a slice may be sent to, one after the other, when members are lost under it. */
    private int sliceAttempts = 3;

    /**
     * Classes the inputs and results of distributed groups may hold besides the JDK's value types
     * (java.lang, java.util, java.time, java.math): packages (com.example.sweep.*), package trees
     * (com.example.**) or class names. Allow value types only: any member of the cluster can make this
     * one decode bytes of its choosing. A PayloadCodec bean replaces the codec (and this list). Unset:
     * the JDK's value types only.
     */
    private @Nullable List<String> allowedClasses;

    /**
     * How many members (this one included) the cluster should have: with fewer, the hts health
     * contributor's cluster detail reads DEGRADED (the status stays UP: the members there are run the
     * slices).
     */
    private int minimumMembers = 1;

    private final Hazelcast hazelcast = new Hazelcast();

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public DataSize getInlineLimit() {
        return this.inlineLimit;
    }

    public void setInlineLimit(DataSize inlineLimit) {
        this.inlineLimit = inlineLimit;
    }

    public Duration getRoundTrip() {
        return this.roundTrip;
    }

    public void setRoundTrip(Duration roundTrip) {
        this.roundTrip = roundTrip;
    }

    public double getOverhead() {
        return this.overhead;
    }

    public void setOverhead(double overhead) {
        this.overhead = overhead;
    }

    public int getSliceAttempts() {
        return this.sliceAttempts;
    }

    public void setSliceAttempts(int sliceAttempts) {
        this.sliceAttempts = sliceAttempts;
    }

    public @Nullable List<String> getAllowedClasses() {
        return this.allowedClasses;
    }

    public void setAllowedClasses(@Nullable List<String> allowedClasses) {
        this.allowedClasses = allowedClasses;
    }

    public int getMinimumMembers() {
        return this.minimumMembers;
    }

    public void setMinimumMembers(int minimumMembers) {
        this.minimumMembers = minimumMembers;
    }

    public Hazelcast getHazelcast() {
        return this.hazelcast;
    }

    /**
     * The engine's settings from these properties (checked by {@link HtsPropertiesValidator}).
     *
     * @param codec the application's codec, or null for Java serialization allowing
     *     {@link #getAllowedClasses()}
     */
    ClusterSettings settings(@Nullable PayloadCodec codec) {
        List<String> allowed = allowedClasses != null ? allowedClasses : List.of();
        PayloadCodec c = codec != null ? codec : JavaSerializationCodec.allowing(allowed.toArray(String[]::new));
        return new ClusterSettings(c, (int) inlineLimit.toBytes(), roundTrip, overhead, sliceAttempts);
    }

    /**
     * The Hazelcast structures HTS uses and how often a member publishes its load. Every member of
     * one HTS cluster must use the same names.
     */
    public static class Hazelcast {

        /**
         * The IExecutorService slices run through; its pool size (Hazelcast's ExecutorConfig of this
         * name, 16 by default) bounds the slices a member serves at once.
         */
        private String executorName = "hts-slices";

        /** The map where each member publishes its CPU slots, GPUs, health and load. */
        private String membersMap = "hts-members";

        /** The map of payloads above hts.cluster.inline-limit. */
        private String payloadMap = "hts-payloads";

        /**
         * How long a stored payload lives when nobody deletes it (its coordinator was lost): at least
         * 1s.
         */
        private Duration payloadTimeToLive = Duration.ofMinutes(10);

        /** How often this member publishes its load: at least 10ms. */
        private Duration statusInterval = Duration.ofSeconds(1);

        public String getExecutorName() {
            return this.executorName;
        }

        public void setExecutorName(String executorName) {
            this.executorName = executorName;
        }

        public String getMembersMap() {
            return this.membersMap;
        }

        public void setMembersMap(String membersMap) {
            this.membersMap = membersMap;
        }

        public String getPayloadMap() {
            return this.payloadMap;
        }

        public void setPayloadMap(String payloadMap) {
            this.payloadMap = payloadMap;
        }

        public Duration getPayloadTimeToLive() {
            return this.payloadTimeToLive;
        }

        public void setPayloadTimeToLive(Duration payloadTimeToLive) {
            this.payloadTimeToLive = payloadTimeToLive;
        }

        public Duration getStatusInterval() {
            return this.statusInterval;
        }

        public void setStatusInterval(Duration statusInterval) {
            this.statusInterval = statusInterval;
        }
    }
}
