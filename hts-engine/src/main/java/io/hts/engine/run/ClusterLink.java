package io.hts.engine.run;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.cluster.GraphFingerprint;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.internal.CompiledGraph;
import io.hts.engine.policy.DeviceHealth;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A scheduler's side of its cluster engine: the distributed groups of each graph (checked once per
 * graph), the size of a group's slices, the member a slice goes to, and this member's service of the
 * slices others send. Holds no state that changes, except through the engine and the service.
 */
final class ClusterLink {

    final Scheduler scheduler;
    final ClusterEngine engine;
    final ClusterSettings settings;
    final SliceService service;

    ClusterLink(Scheduler scheduler, ClusterEngine engine, ClusterSettings settings) {
        this.scheduler = scheduler;
        this.engine = engine;
        this.settings = settings;
        this.service = new SliceService(scheduler, this);
    }

    /** Starts serving the slices other members send. */
    void serve() {
        engine.serve(service);
    }

    /** The scheduler shut down: the engine publishes this member DOWN now, and others stop sending it slices. */
    void shutdown() {
        engine.serverChanged();
    }

    /** The distributed groups of a graph on this scheduler, checked and made once per graph. */
    ClusterPlan plan(CompiledGraph graph) {
        return graph.bound(this, ClusterPlan.class, ClusterPlan::new);
    }

    /** The distributed side of a run, or null when its graph has no distributed group. */
    @Nullable
    DistributedRun runOf(GraphRun run) {
        ClusterPlan plan = plan(run.graph);
        return plan.groups.isEmpty() ? null : new DistributedRun(run, this, plan);
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

    /** A graph's distributed groups, and for each task the group it belongs to (-1: none). */
    static final class ClusterPlan {

        final List<TaskGroup<?>> groups;
        /** What the members of each group need of the member their slice goes to, by position in {@link #groups}. */
        final List<Needs> needs;
        /** The graph's fingerprint, which workers compare with their own; empty without distributed groups. */
        final String fingerprint;

        private final int @Nullable [] groupOf;

        ClusterPlan(CompiledGraph graph) {
            Map<TaskGroup<?>, Integer> found = new IdentityHashMap<>();
            List<TaskGroup<?>> list = new ArrayList<>();
            int[] of = null;
            for (int i = 0; i < graph.size(); i++) {
                Task<?> t = graph.task(i);
                TaskGroup<?> g = t.group();
                if (g == null || !g.isDistributed()) {
                    continue;
                }
                if (of == null) {
                    of = new int[graph.size()];
                    Arrays.fill(of, -1);
                }
                Integer position = found.get(g);
                if (position == null) {
                    position = list.size();
                    found.put(g, position);
                    list.add(g);
                }
                of[i] = position;
            }
            if (of != null) {
                refuseDependenciesWithinGroups(graph, of, list.size());
            }
            this.groups = List.copyOf(list);
            this.needs = list.stream().map(Needs::of).toList();
            this.groupOf = of;
            this.fingerprint = list.isEmpty() ? "" : GraphFingerprint.of(graph.graph());
        }

        /**
         * A slice is sent once all its members are ready, so a member that depends on another member
         * of its group, directly or through other tasks, could wait for its own slice (or for a slice
         * that waits for it): refused, naming both members. One breadth-first walk per distributed
         * group, from its members' successors.
         */
        private static void refuseDependenciesWithinGroups(CompiledGraph compiled, int[] groupOf, int groups) {
            GraphTopology graph = compiled.topology();
            int n = graph.size();
            int[] reachedFrom = new int[n];
            int[] queue = new int[n];
            for (int p = 0; p < groups; p++) {
                Arrays.fill(reachedFrom, -1);
                int head = 0;
                int tail = 0;
                for (int m = 0; m < n; m++) {
                    if (groupOf[m] != p) {
                        continue;
                    }
                    for (int q = graph.successorStart(m); q < graph.successorEnd(m); q++) {
                        int s = graph.successor(q);
                        if (reachedFrom[s] < 0) {
                            reachedFrom[s] = m;
                            queue[tail++] = s;
                        }
                    }
                }
                while (head < tail) {
                    int x = queue[head++];
                    if (groupOf[x] == p) {
                        String member = graph.name(x);
                        String other = graph.name(reachedFrom[x]);
                        throw new GraphValidationException(
                                GraphValidationException.Problem.INVALID_SETTING,
                                List.of(member, other),
                                "graph '" + graph.name() + "': '" + member + "' depends on '" + other
                                        + "', a member of the same distributed group; a distributed group's"
                                        + " members run in slices once all of a slice's members are ready,"
                                        + " so they may not depend on one another, directly or through other"
                                        + " tasks (make the group not distributed, or move the dependency out"
                                        + " of it)");
                    }
                    for (int q = graph.successorStart(x); q < graph.successorEnd(x); q++) {
                        int s = graph.successor(q);
                        if (reachedFrom[s] < 0) {
                            reachedFrom[s] = reachedFrom[x];
                            queue[tail++] = s;
                        }
                    }
                }
            }
        }

        /** The position in {@link #groups} of task {@code i}'s group, or -1 when it is in no distributed group. */
        int groupOf(int i) {
            int[] of = groupOf;
            return of == null ? -1 : of[i];
        }

        /** Whether task {@code i} runs where its slice goes (a member of a distributed group). */
        boolean distributes(int i) {
            return groupOf(i) >= 0;
        }
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
