package io.hts.engine.cluster;

import java.util.Objects;

/**
 * A worker member refused a slice: it has no graph of that name registered, or its graph has
 * another {@link GraphFingerprint} (another version of the application), or the slice names no
 * distributed group of the graph. The message names the graph and the member.
 */
public final class GraphRefusedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String graph;
    private final String member;

    /**
     * Creates the exception.
     *
     * @param graph the graph's name
     * @param member the refusing member's address and id
     * @param message the whole message (naming both, and what would be accepted)
     */
    public GraphRefusedException(String graph, String member, String message) {
        super(message);
        this.graph = Objects.requireNonNull(graph, "graph");
        this.member = Objects.requireNonNull(member, "member");
    }

    /** The graph's name. */
    public String graph() {
        return graph;
    }

    /** The member that refused, as its address and id. */
    public String member() {
        return member;
    }
}
