package io.hts.engine.cluster;

import java.util.concurrent.CompletionStage;

/** A slice sent to a member, in flight. */
public interface SubmittedSlice {

    /** The member it was sent to. */
    ClusterMember member();

    /** Completes with the member's result; see {@link ClusterEngine#submit} for its failures. */
    CompletionStage<SliceResult> result();

    /**
     * Asks the member to stop the slice (its bodies see {@code ctx.isCancelled()} and an
     * interrupt). Best effort: the result may still arrive, and the caller ignores it.
     */
    void cancel();
}
