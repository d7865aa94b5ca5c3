package io.hts.engine.graph;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The shape a compiled graph keeps: degrees, direct dependencies, barriers, per-run slots and its size in memory. */
class GraphTopologyTests {

    @Test
    void aTopologyAnswersDegreesDirectDependenciesAndBarriers() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        Task<Integer> b = g.task("b").cpu(ctx -> 2);
        Task<Integer> c = g.task("c").after(b, a).cpu(ctx -> 3);
        TaskBarrier join = g.barrier("join").after(c);
        Task<Integer> d = g.task("d").after(join).cpu(ctx -> 4);
        GraphTopology t = g.compile();
        assertThat(t.outDegree(a.index())).isOne();
        assertThat(t.outDegree(c.index())).isOne();
        assertThat(t.outDegree(d.index())).isZero();
        assertThat(t.inDegree(c.index())).isEqualTo(2);
        assertThat(t.predecessorNames(c.index())).as("in index order").containsExactly("a", "b");
        assertThat(t.predecessorNames(a.index())).isEmpty();
        assertThat(t.dependsOn(c.index(), a.index())).isTrue();
        assertThat(t.dependsOn(a.index(), c.index()))
                .as("an edge has a direction")
                .isFalse();
        assertThat(t.dependsOn(d.index(), c.index()))
                .as("only direct dependencies")
                .isFalse();
        assertThat(t.isBarrier(join.task().index())).isTrue();
        assertThat(t.isBarrier(c.index())).isFalse();
        assertThat(t.statisticsName(d.index())).isEqualTo("d");
        assertThat(t).hasToString("topology of graph 'g' (5 tasks, 4 edges)");
    }

    @Test
    void aOneTaskGraphReadsInTheSingular() {
        TaskGraph g = TaskGraph.named("one");
        g.task("only").cpu(ctx -> 1);
        assertThat(g.compile()).hasToString("topology of graph 'one' (1 task, 0 edges)");
    }

    @Test
    void perRunSlotsOfALargeGraphAreDistinctCompactAndSetConsecutiveTasksApart() {
        int n = 1007;
        TaskGraph g = TaskGraph.named("large");
        g.group("t", n, (i, b) -> b.cpu(ctx -> i));
        GraphTopology t = g.compile();
        assertThat(t.slots()).as("one entry a task, plus at most 15").isBetween(n, n + 15);
        Set<Integer> used = new HashSet<>();
        for (int i = 0; i < n; i++) {
            assertThat(t.slot(i)).isBetween(0, t.slots() - 1);
            assertThat(used.add(t.slot(i))).as("slot of task %d is its own", i).isTrue();
            if (i > 0) {
                assertThat(Math.abs(t.slot(i) - t.slot(i - 1)))
                        .as("tasks %d and %d at least 64 bytes of ints apart", i - 1, i)
                        .isGreaterThanOrEqualTo(16);
            }
        }
    }

    @Test
    void aTopologyHoldsAtLeastItsArraysAndTheTextOfItsNames() {
        int n = 300;
        String padding = "x".repeat(100);
        TaskGraph g = TaskGraph.named("named");
        Task<Integer> previous = g.task("t0" + padding).cpu(ctx -> 0);
        for (int i = 1; i < n; i++) {
            Task<Integer> p = previous;
            previous = g.task("t" + i + padding).after(p).cpu(ctx -> 1);
        }
        GraphTopology t = g.compile();
        long names = 0;
        for (int i = 0; i < n; i++) {
            names += t.name(i).length();
        }
        // four int arrays of n or n + 1 entries, two of the edges, and the names' bytes with their
        // arrays' headers (16 bytes)
        long lowest = 4L * (4L * n + 2) + 2 * 4L * t.edgeCount() + names + 16L * n;
        assertThat(t.estimatedBytes()).isGreaterThanOrEqualTo(lowest);
    }
}
