package io.hts.engine.graph.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import org.junit.jupiter.api.Test;

class CompiledGraphTests {

    @Test
    void theCompiledFormIsOnePerGraphAndCarriesTheTopologyTheUserSees() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        g.task("b").after(a).gpu(ctx -> 2);
        CompiledGraph c = CompiledGraph.of(g);
        assertThat(CompiledGraph.of(g)).isSameAs(c);
        assertThat(c.topology()).isSameAs(g.compile());
        assertThat(c.graph()).isSameAs(g);
        assertThat(c.size()).isEqualTo(2);
        assertThat(c.edgeCount()).isOne();
        assertThat(c.task(0)).isSameAs(a);
        assertThat(c.name(1)).isEqualTo("b");
        assertThat(c.hasGpuBodies()).isTrue();
        assertThat(c).hasToString("compiled topology of graph 'g' (2 tasks, 1 edge)");
        assertThat(g.isFrozen()).isTrue();
    }

    @Test
    void anInvalidGraphIsRefusedAndStaysOpen() {
        TaskGraph g = TaskGraph.named("g");
        g.task("a").after("missing").cpu(ctx -> 1);
        assertThatThrownBy(() -> CompiledGraph.of(g))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("'missing'");
        assertThat(g.isFrozen()).isFalse();
    }

    @Test
    void theBridgeIsInstalledOnceByTaskGraph() {
        TaskGraph.named("initialised");
        assertThatThrownBy(() -> CompiledGraph.install(graph -> CompiledGraph.of(graph)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the TaskGraph bridge is installed already");
    }

    @Test
    void aValueBoundToAnOwnerIsComputedOncePerOwner() {
        TaskGraph g = TaskGraph.named("g");
        g.task("a").cpu(ctx -> 1);
        CompiledGraph c = CompiledGraph.of(g);
        Object first = new Object();
        Object second = new Object();
        String one = c.bound(first, String.class, compiled -> "one");
        assertThat(c.bound(first, String.class, compiled -> "again")).isSameAs(one);
        assertThat(c.bound(second, String.class, compiled -> "two")).isEqualTo("two");
        assertThat(c.bound(first, String.class, compiled -> "recomputed"))
                .as("the last owner to ask keeps the value")
                .isEqualTo("recomputed");
    }

    @Test
    void aGraphOfCpuBodiesOnlyHasNoGpuBodies() {
        TaskGraph g = TaskGraph.named("cpu-only");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        g.task("b").after(a).cpu(ctx -> 2);
        g.barrier("done").after(a);
        assertThat(CompiledGraph.of(g).hasGpuBodies()).isFalse();
    }
}
