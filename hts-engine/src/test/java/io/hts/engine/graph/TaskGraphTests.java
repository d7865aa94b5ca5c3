package io.hts.engine.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A graph's own view of what was added to it: sizes, lookups, groups and barriers. */
class TaskGraphTests {

    @Test
    void aGroupOfNoTasksIsAGroupAllTheSame() {
        TaskGraph g = TaskGraph.named("g");
        TaskGroup<Integer> none = g.group("none", 0, (i, t) -> t.cpu(ctx -> i));
        assertThat(none.members()).isEmpty();
        assertThat(none.size()).isZero();
        assertThat(none).hasToString("group 'none' (0 tasks)");
        assertThat(g.size()).isZero();
    }

    @Test
    void aGroupKnowsItsMembersInIndexOrder() {
        TaskGraph g = TaskGraph.named("g");
        TaskGroup<Integer> shards = g.group("shard", 3, (i, t) -> t.cpu(ctx -> i));
        assertThat(shards.members()).extracting(Task::name).containsExactly("shard[0]", "shard[1]", "shard[2]");
        assertThat(shards.members()).extracting(Task::groupIndex).containsExactly(0, 1, 2);
        assertThat(shards).hasToString("group 'shard' (3 tasks)");
        assertThat(g.size()).isEqualTo(3);
        assertThat(g.tasks()).containsExactlyElementsOf(shards.members());
    }

    @Test
    void aBarrierIsFoundByNameAsItsJoinTask() {
        TaskGraph g = TaskGraph.named("g");
        TaskBarrier join = g.barrier("join");
        assertThat(join.name()).isEqualTo("join");
        assertThat(join).hasToString("barrier 'join'");
        assertThat(g.find("join")).containsSame(join.task());
        assertThat(g.find("nothing")).isEmpty();
        assertThat(g).hasToString("graph 'g'");
    }

    @Test
    void aFrozenGraphRefusesANewGroup() {
        TaskGraph g = TaskGraph.named("g");
        g.task("a").cpu(ctx -> 1);
        g.compile();
        assertThatIllegalStateException()
                .isThrownBy(() -> g.group("late", 2, (i, t) -> t.cpu(ctx -> i)))
                .withMessageContaining("graph 'g' has been submitted and is frozen");
        assertThatIllegalStateException()
                .as("even a group of no tasks")
                .isThrownBy(() -> g.group("empty", 0, (i, t) -> t.cpu(ctx -> i)))
                .withMessageContaining("graph 'g' has been submitted and is frozen");
        assertThat(g.find("empty")).isEmpty();
        assertThat(g.size()).isOne();
    }

    @Test
    void aGraphBegunOnOneThreadIsFinishedOnAnother() throws Exception {
        TaskGraph g = TaskGraph.named("handed-over");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        g.barrier("join").after(a);
        assertThat(g.size()).isEqualTo(2);
        assertThat(g.tasks()).hasSize(2);
        assertThat(g.find("a")).isPresent();
        GraphTopology topology = CompletableFuture.supplyAsync(() -> {
                    g.task("b").after("join").cpu(ctx -> 2);
                    return g.compile();
                })
                .get(10, TimeUnit.SECONDS);
        assertThat(topology.size()).isEqualTo(3);
    }

    @Test
    void aReleasableResultCannotReportItsReleaseUnlessItSaysSo() {
        java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
        Releasable plain = () -> {};
        assertThat(plain.whenReleased(() -> ran.set(true))).isFalse();
        plain.release();
        assertThat(ran).as("the action is never run").isFalse();
    }
}
