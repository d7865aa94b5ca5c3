package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.cluster.LoopbackCluster;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.internal.CompiledGraph;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How the kernel carries its extension (cluster distribution): which tasks it owns is asked once
 * per graph and kept in the execution plan, a graph or scheduler without owned tasks carries
 * nothing per run, and an owned task is never a worker's continuation.
 */
class ExtensionHooksTests {

    private final LoopbackCluster cluster = new LoopbackCluster();
    private final Scheduler clustered =
            Scheduler.builder().threads(2).cluster(cluster.member("a")).build();
    private final Scheduler plain = Scheduler.builder().threads(2).build();

    @AfterEach
    void close() {
        clustered.close();
        plain.close();
        cluster.close();
    }

    private static TaskGraph distributed(String name) {
        TaskGraph g = TaskGraph.named(name);
        Task<Integer> seed = g.task("seed").cpu(ctx -> 1);
        TaskGroup<Integer> parts = g.group("part", 4, (i, t) -> t.after(seed).cpu(ctx -> ctx.input(seed) + i))
                .distributed(2);
        g.task("sum")
                .after(parts)
                .cpu(ctx ->
                        ctx.inputs(parts).stream().mapToInt(Integer::intValue).sum());
        return g;
    }

    private static TaskGraph local(String name) {
        TaskGraph g = TaskGraph.named(name);
        Task<Integer> seed = g.task("seed").cpu(ctx -> 1);
        g.task("next").after(seed).cpu(ctx -> ctx.input(seed) + 1);
        return g;
    }

    @Test
    void aSchedulerWithAClusterMakesAGraphsPlanOnceAsOneWithout() {
        CompiledGraph g = CompiledGraph.of(distributed("once"));
        assertThat(clustered.plan(g)).isSameAs(clustered.plan(g)); // (the cluster's plan of the graph is in it)
        CompiledGraph h = CompiledGraph.of(local("once-local"));
        assertThat(plain.plan(h)).isSameAs(plain.plan(h));
    }

    @Test
    void theOwnedTasksAreKeptInThePlanAndAreNeverContinuations() {
        TaskGraph graph = distributed("owned");
        ExecutionPlan plan = clustered.plan(CompiledGraph.of(graph));
        assertThat(plan.extension).isNotNull();
        for (int i = 0; i < graph.compile().size(); i++) {
            boolean member = graph.compile().name(i).startsWith("part[");
            assertThat(plan.owns(i)).as("task %s", i).isEqualTo(member);
            if (member) {
                assertThat(plan.has(i, ExecutionPlan.CONTINUATION)).isFalse(); // (one CPU dependency: it would be)
            }
        }
        GraphRun run = clustered.execute(graph);
        assertThat(run.extension).isNotNull();
        assertThat(run.result(graph.find("sum").orElseThrow())).isEqualTo(10);
    }

    @Test
    void withoutOwnedTasksNothingIsCarried() {
        TaskGraph onCluster = local("nothing-owned");
        assertThat(clustered.plan(CompiledGraph.of(onCluster)).extension).isNull();
        assertThat(clustered.execute(onCluster).extension).isNull();

        TaskGraph alone = distributed("no-cluster"); // a distributed group on a scheduler without a cluster
        ExecutionPlan plan = plain.plan(CompiledGraph.of(alone));
        assertThat(plan.extension).isNull();
        assertThat(plan.owns(1)).isFalse();
        assertThat(plain.execute(alone).extension).isNull();
    }
}
