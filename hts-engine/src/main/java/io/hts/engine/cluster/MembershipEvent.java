package io.hts.engine.cluster;

import java.util.Objects;

/**
 * A member joined or left.
 *
 * @param kind what happened
 * @param member the member (when it left: as last known)
 */
public record MembershipEvent(Kind kind, ClusterMember member) {

    /** Checks the values. */
    public MembershipEvent {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(member, "member");
    }

    /** What happened to the member. */
    public enum Kind {
        /** It joined, or began to serve HTS work. */
        JOINED,
        /** It left, crashed or was shut down; slices it was running are sent elsewhere. */
        LEFT
    }
}
