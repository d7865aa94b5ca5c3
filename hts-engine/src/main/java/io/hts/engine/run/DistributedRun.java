package io.hts.engine.run;

import io.hts.engine.cluster.ClusterMember;
import java.util.List;

/**
 * The distributed groups of one run ({@code TaskGroup.distributed()}), each sliced by its
 * {@link GroupSlices}. Made with the run when its scheduler has a cluster engine and its graph a
 * distributed group; its fields are final and the per-group state is the slices' own.
 */
final class DistributedRun {

    private final ClusterLink.ClusterPlan plan;
    private final GroupSlices[] groups;

    DistributedRun(GraphRun run, ClusterLink link, ClusterLink.ClusterPlan plan) {
        this.plan = plan;
        List<ClusterMember> members = link.engine.members();
        this.groups = new GroupSlices[plan.groups.size()];
        for (int g = 0; g < groups.length; g++) {
            groups[g] = new GroupSlices(run, link, plan.groups.get(g), plan.needs.get(g), plan.fingerprint, members);
        }
    }

    /** Whether task {@code i} is a member of a distributed group. */
    boolean owns(int i) {
        return plan.groupOf(i) >= 0;
    }

    /** A member's first attempt, READY: its slice takes it, and places it where the slice goes. */
    void ready(TaskExecution e) {
        groups[plan.groupOf(e.index)].ready(e);
    }

    /** A member's retry: it goes where the group's choice gives now, this member included. */
    void retry(TaskExecution e) {
        groups[plan.groupOf(e.index)].retry(e);
    }

    /** {@code run.cancel(task)} of task {@code i}: its attempt on another member, if any, ends now. */
    void cancelRemote(int i, Throwable cause) {
        int g = plan.groupOf(i);
        if (g >= 0) {
            groups[g].cancelRemote(i, cause);
        }
    }

    /** Task {@code i} was cancelled before it started (READY or not): its slice no longer waits for it. */
    void notStarted(int i) {
        int g = plan.groupOf(i);
        if (g >= 0) {
            groups[g].notStarted(i);
        }
    }

    /**
     * The run was cancelled, or failed fast: the slices and retries in flight are cancelled on their
     * members, their tasks end CANCELLED.
     */
    void cancelled(Throwable cause) {
        for (GroupSlices g : groups) {
            g.cancelAll(cause);
        }
    }

    /** The run ended: the inputs stored for other members go. */
    void finished() {
        for (GroupSlices g : groups) {
            g.deleteStoredInputs();
        }
    }
}
