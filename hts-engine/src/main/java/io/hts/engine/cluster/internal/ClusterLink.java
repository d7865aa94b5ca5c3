package io.hts.engine.cluster.internal;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.internal.CompiledGraph;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.internal.SchedulerExtension;
import io.hts.engine.run.internal.SchedulerHandle;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A scheduler's side of its cluster engine, the scheduler's extension ({@link SchedulerExtension}):
 * the distributed groups of each graph (checked once per graph, in its {@link ClusterPlan}), the
 * size of a group's slices, the member a slice goes to, and this member's service of the slices
 * others send. Holds no state that changes, except through the engine and the service.
 */
final class ClusterLink implements SchedulerExtension {

    /** The scheduler's public API; not called before {@link #started()}. */
    final Scheduler scheduler;
    /** What the kernel gives the distribution besides that API (owed runs, its timer). */
    final SchedulerHandle hooks;

    final ClusterEngine engine;
    final ClusterSettings settings;
    final SliceService service;

    ClusterLink(SchedulerHandle hooks, ClusterEngine engine, ClusterSettings settings) {
        this.hooks = hooks;
        this.scheduler = hooks.scheduler();
        this.engine = engine;
        this.settings = settings;
        this.service = new SliceService(this);
    }

    /** The scheduler is built: this member serves the slices other members send from now on. */
    @Override
    public void started() {
        engine.serve(service);
    }

    /** The scheduler shut down: the engine publishes this member DOWN now, and others stop sending it slices. */
    @Override
    public void shutdown() {
        engine.serverChanged();
    }

    /** The distributed groups of a graph on this scheduler, checked once per graph; null when it has none. */
    @Override
    public @Nullable ClusterPlan graph(CompiledGraph graph) {
        ClusterPlan plan = new ClusterPlan(this, graph);
        return plan.groups.isEmpty() ? null : plan;
    }

    /**
     * The members per slice of a group: its declared size; else from the cost model, so that a
     * round trip is at most {@code overhead} of a slice's work (capped so that every member gets two
     * slices), or, while the cost is unknown, about four slices per slot of the cluster that can run
     * it. Zero: the whole group is worth less than one slice and stays on this member.
     */
    int sliceSize(TaskGroup<?> group, Needs needs, List<ClusterMember> members) {
        int n = group.size();
        if (group.sliceSize() > 0) {
            return group.sliceSize();
        }
        long estimate = estimate(group, needs.gpuOnly ? Device.GPU : Device.CPU);
        long sliceWork = (long) (settings.roundTrip().toNanos() / settings.overhead());
        if (estimate > 0) {
            if (estimate * (double) n < sliceWork) {
                return 0;
            }
            long size = (sliceWork + estimate - 1) / estimate;
            int cap = Math.max(1, ceilDiv(n, 2 * Math.max(1, members.size())));
            return (int) Math.max(1, Math.min(size, cap));
        }
        long slots = 0; // (a GPU weighs one slot here: whole numbers)
        for (ClusterMember m : members) {
            slots += (long) capacity(m, needs, 1);
        }
        return Math.max(1, ceilDiv(n, 4 * (int) Math.min(Integer.MAX_VALUE / 4, Math.max(1, slots))));
    }

    /** A group member's declared cost on a device, else the cost model's estimate; -1 when unknown. */
    private long estimate(TaskGroup<?> group, Device device) {
        Task<?> first = group.get(0);
        long declared = first.costNanos(device);
        return declared > 0 ? declared : scheduler.costModel().estimate(first.statisticsName(), device);
    }

    /**
     * How many of a group's slices a member runs at once: its CPU slots for CPU bodies, its GPUs for
     * GPU bodies (a group with both counts a GPU as {@code gpuWeight} CPU slots); 0 when it cannot
     * run them.
     */
    private static double capacity(ClusterMember m, Needs needs, double gpuWeight) {
        if (needs.gpuOnly) {
            return m.gpus() >= needs.gpus ? m.gpus() : 0; // (a member pinned to cuda:n needs n + 1 GPUs)
        }
        return needs.gpu ? m.cpuSlots() + m.gpus() * gpuWeight : m.cpuSlots();
    }

    /**
     * The member for the next slice of a group: the lowest of (slices given it in this group + 1)
     * per slot that can run the group's bodies, weighed by the load other coordinators put on it
     * ({@link ClusterMember#loadFromOthers}), a DEGRADED member last; never
     * an excluded one, a DOWN one other than this member (whose own runs finish after a shutdown),
     * nor one without a GPU for a group whose members have only GPU bodies.
     * A GPU counts as one slot, or, for a group with both bodies whose costs the cost model knows, as
     * many CPU slots as it is faster.
     *
     * @return the member, or null when none is left
     */
    @Nullable
    ClusterMember choose(TaskGroup<?> group, Needs needs, Map<String, Integer> assigned, Set<String> excluded) {
        double gpuWeight = 1;
        if (needs.gpu && !needs.gpuOnly) {
            long cpu = estimate(group, Device.CPU);
            long gpu = estimate(group, Device.GPU);
            if (cpu > 0 && gpu > 0) {
                gpuWeight = Math.max(1, (double) cpu / gpu);
            }
        }
        String me = engine.localMember().id();
        ClusterMember best = null;
        double bestScore = Double.MAX_VALUE;
        for (ClusterMember m : engine.members()) {
            double capacity = capacity(m, needs, gpuWeight);
            // this member DOWN (its scheduler shut down) still runs the slices of its own running runs
            boolean down = m.health() == DeviceHealth.DOWN && !m.local();
            if (down || excluded.contains(m.id()) || capacity <= 0) {
                continue;
            }
            double load = m.loadFromOthers(me); // (this member's slices count through assigned)
            double score = (assigned.getOrDefault(m.id(), 0) + 1.0) / capacity * (1 + load);
            if (m.health() == DeviceHealth.DEGRADED) {
                score *= 4;
            }
            if (score < bestScore) {
                bestScore = score;
                best = m;
            }
        }
        return best;
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    /**
     * What a distributed group's members need of a member: {@code gpu} when one has a GPU body
     * (members with GPUs may run it there, their policy deciding), {@code gpuOnly} when one has no
     * CPU body (its slices go only to members with GPUs), and then {@code gpus}, the GPUs such a
     * member needs: one more than the highest ordinal a member without a CPU body is pinned to
     * ({@code onGpu}), else 1.
     */
    record Needs(boolean gpu, boolean gpuOnly, int gpus) {

        static Needs of(TaskGroup<?> group) {
            boolean gpu = false;
            boolean gpuOnly = false;
            int gpus = 1;
            for (Task<?> t : group.members()) {
                gpu |= t.gpuBody() != null;
                if (t.cpuBody() == null) {
                    gpuOnly = true;
                    gpus = Math.max(gpus, t.gpuOrdinal() + 1);
                }
            }
            return new Needs(gpu, gpuOnly, gpus);
        }
    }
}
