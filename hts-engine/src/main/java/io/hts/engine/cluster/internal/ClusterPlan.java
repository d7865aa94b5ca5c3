package io.hts.engine.cluster.internal;

import io.hts.engine.cluster.GraphFingerprint;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.internal.CompiledGraph;
import io.hts.engine.run.internal.GraphExtension;
import io.hts.engine.run.internal.RunExtension;
import io.hts.engine.run.internal.RunHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A graph's distributed groups on one scheduler, and for each task the group it belongs to (-1:
 * none): the distribution's part of the graph ({@link GraphExtension}), made once per graph and
 * scheduler while the graph's execution plan is made (which keeps {@link #owns} per task), and
 * refusing a graph whose group members depend on each other. Immutable; shared by the graph's runs.
 */
final class ClusterPlan implements GraphExtension {

    private final ClusterLink link;

    final List<TaskGroup<?>> groups;
    /** What the members of each group need of the member their slice goes to, by position in {@link #groups}. */
    final List<ClusterLink.Needs> needs;
    /** The graph's fingerprint, which workers compare with their own; empty without distributed groups. */
    final String fingerprint;

    private final int @Nullable [] groupOf;

    ClusterPlan(ClusterLink link, CompiledGraph graph) {
        this.link = link;
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
        this.needs = list.stream().map(ClusterLink.Needs::of).toList();
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
    @Override
    public boolean owns(int i) {
        return groupOf(i) >= 0;
    }

    /** The slices of a run's distributed groups. */
    @Override
    public RunExtension run(RunHandle run) {
        return new DistributedRun(run, link, this);
    }
}
