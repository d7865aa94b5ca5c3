package io.hts.engine.cluster;

import java.util.List;
import java.util.function.Consumer;

/**
 * A distributed engine as a scheduler sees it: the members that serve HTS work and their
 * capacities, non-blocking submission of slices to a member, membership events, serving the slices
 * other members send here, and a store for large payloads. Implementations are thread-safe; none of
 * the methods may block for a remote round trip.
 *
 * <p>{@code hts-cluster}'s {@code HazelcastClusterEngine} implements it over an embedded Hazelcast
 * member; a scheduler takes it through {@code Scheduler.builder().cluster(engine)}.
 */
public interface ClusterEngine {

    /** A short description, e.g. {@code hazelcast 5.7.0, cluster 'hts'}. */
    String name();

    /** This JVM's member. */
    ClusterMember localMember();

    /**
     * The members serving HTS work now (this one included once it serves), in a stable order. A
     * member that joined the cluster but serves no HTS work (another application) is not listed.
     */
    List<ClusterMember> members();

    /**
     * Sends a slice to a member without waiting for it. The returned slice completes with the
     * member's result, or exceptionally: with {@link MemberLostException} when the member left (or
     * was never there) before it answered, with {@link GraphRefusedException} when the member
     * refused the graph, or with another exception when the slice could not run there at all (its
     * inputs could not be decoded, say).
     *
     * @param member the member, one of {@link #members()} (the local member included)
     * @param work the slice
     * @return the slice in flight
     */
    SubmittedSlice submit(ClusterMember member, SliceWork work);

    /**
     * Subscribes to members joining and leaving.
     *
     * @param listener called on the engine's threads; must not block
     * @return the subscription; closing it unsubscribes
     */
    Subscription onMembershipChange(Consumer<MembershipEvent> listener);

    /**
     * Serves the slices other members send here from now on, through {@code server}; until then this
     * member is not listed by {@link #members()}. A scheduler built with this engine calls it once.
     *
     * @param server runs a slice on this member's scheduler
     * @throws IllegalStateException when another server serves already
     */
    void serve(SliceServer server);

    /** The store for payloads too large to travel by value. */
    PayloadStore payloads();

    /**
     * The server's {@link SliceServer#health() health} or capacity changed (its scheduler is shut
     * down, say): an engine that publishes them to the other members does so now, without blocking,
     * rather than at its next regular publication. Does nothing by default.
     */
    default void serverChanged() {}

    /** A subscription; closing it twice does nothing. */
    interface Subscription extends AutoCloseable {

        @Override
        void close();
    }
}
