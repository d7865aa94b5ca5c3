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
            groups[g] = new GroupSlices(run, link, plan.groups.get(g), plan.fingerprint, members);
        }
    }

    /** Whether task {@code i} is a member of a distributed group. */
    boolean owns(int i) {
        return plan.groupOf(i) >= 0;
    }

    /** A member's first attempt, READY and placed on the CPU: its slice takes it. */
    void ready(TaskExecution e) {
        groups[plan.groupOf(e.index)].ready(e);
    }

    /** Task {@code i} was cancelled before it started (READY or not): its slice no longer waits for it. */
    void notStarted(int i) {
        int g = plan.groupOf(i);
        if (g >= 0) {
            groups[g].notStarted(i);
        }
    }

    /** The run was cancelled: the slices in flight are cancelled on their members, their tasks end CANCELLED. */
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
