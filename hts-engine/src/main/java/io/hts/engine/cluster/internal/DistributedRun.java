package io.hts.engine.cluster.internal;

import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.run.internal.AttemptHandle;
import io.hts.engine.run.internal.RunExtension;
import io.hts.engine.run.internal.RunHandle;
import java.util.List;

/**
 * The distributed groups of one run ({@code TaskGroup.distributed()}), each sliced by its
 * {@link GroupSlices}: the distribution's part of the run ({@link RunExtension}). Made with the run
 * when its scheduler has a cluster engine and its graph a distributed group; the kernel calls it
 * only for members of those groups. Its fields are final and the per-group state is the slices' own.
 */
final class DistributedRun implements RunExtension {

    private final ClusterPlan plan;
    private final GroupSlices[] groups;

    DistributedRun(RunHandle run, ClusterLink link, ClusterPlan plan) {
        this.plan = plan;
        List<ClusterMember> members = link.engine.members();
        this.groups = new GroupSlices[plan.groups.size()];
        for (int g = 0; g < groups.length; g++) {
            groups[g] = new GroupSlices(run, link, plan.groups.get(g), plan.needs.get(g), plan.fingerprint, members);
        }
    }

    /** A member's first attempt, READY: its slice takes it, and places it where the slice goes. */
    @Override
    public void ready(AttemptHandle e) {
        groups[plan.groupOf(e.task())].ready(e);
    }

    /** A member's retry: it goes where the group's choice gives now, this member included. */
    @Override
    public void retry(AttemptHandle e) {
        groups[plan.groupOf(e.task())].retry(e);
    }

    /** {@code run.cancel(task)} of task {@code i}: its attempt on another member, if any, ends now. */
    @Override
    public void cancelRemote(int i, Throwable cause) {
        int g = plan.groupOf(i);
        if (g >= 0) {
            groups[g].cancelRemote(i, cause);
        }
    }

    /** Task {@code i} was cancelled before it started (READY or not): its slice no longer waits for it. */
    @Override
    public void notStarted(int i) {
        int g = plan.groupOf(i);
        if (g >= 0) {
            groups[g].notStarted(i);
        }
    }

    /**
     * The run was cancelled, or failed fast: the slices and retries in flight are cancelled on their
     * members, their tasks end CANCELLED.
     */
    @Override
    public void cancelled(Throwable cause) {
        for (GroupSlices g : groups) {
            g.cancelAll(cause);
        }
    }

    /** The run ended: the inputs stored for other members go. */
    @Override
    public void finished() {
        for (GroupSlices g : groups) {
            g.deleteStoredInputs();
        }
    }
}
