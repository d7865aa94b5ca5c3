package io.hts.engine.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.hts.engine.graph.internal.CompiledGraph;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TaskGraphValidationTests {

    @Test
    void aCycleIsReportedWithTheTasksOnItInOrder() {
        TaskGraph g = TaskGraph.named("cyclic");
        Task<Integer> a = g.task("a").after("c").cpu(ctx -> 1);
        Task<Integer> b = g.task("b").after(a).cpu(ctx -> 2);
        g.task("c").after(b).cpu(ctx -> 3);
        g.task("outside").after(a).cpu(ctx -> 4);
        GraphValidationException ex = catchThrowableOfType(GraphValidationException.class, g::compile);
        assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.CYCLE);
        assertThat(ex.tasks()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(ex.getMessage())
                .contains("graph 'cyclic' has a cycle")
                .containsAnyOf("a -> b -> c -> a", "b -> c -> a -> b", "c -> a -> b -> c");
    }

    @Test
    void aCycleThroughLateDependenciesAndABarrierIsFound() {
        TaskGraph g = TaskGraph.named("g");
        TaskBarrier barrier = g.barrier("join");
        Task<Integer> x = g.task("x").after(barrier).cpu(ctx -> 1);
        barrier.after(x);
        GraphValidationException ex = catchThrowableOfType(GraphValidationException.class, g::compile);
        assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.CYCLE);
        assertThat(ex.tasks()).containsExactlyInAnyOrder("join", "x");
    }

    @Test
    void selfDependencyNamesTheTask() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        a.after(a);
        assertThatThrownBy(g::compile)
                .isInstanceOfSatisfying(GraphValidationException.class, ex -> {
                    assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.SELF_DEPENDENCY);
                    assertThat(ex.tasks()).containsExactly("a");
                })
                .hasMessageContaining("task 'a' depends on itself");
    }

    @Test
    void duplicateNamesAreRejectedAtOnceAndTheGraphKeepsWhatItHad() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        assertThatThrownBy(() -> g.task("a").cpu(ctx -> 2))
                .isInstanceOfSatisfying(
                        GraphValidationException.class,
                        ex -> assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.DUPLICATE_NAME))
                .hasMessageContaining("graph 'g' already has task 'a'");
        assertThatThrownBy(() -> g.group("a", 2, (i, t) -> t.cpu(ctx -> i)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'a'");
        assertThat(g.tasks()).containsExactly(a);
        assertThat(g.compile().size()).isOne();
    }

    @Test
    void aDependencyOnAnotherGraphsTaskIsRejectedNamingBoth() {
        TaskGraph other = TaskGraph.named("other");
        Task<Integer> foreign = other.task("load").cpu(ctx -> 1);
        TaskGraph g = TaskGraph.named("mine");
        assertThatThrownBy(() -> g.task("merge").after(foreign).cpu(ctx -> 2))
                .isInstanceOfSatisfying(GraphValidationException.class, ex -> {
                    assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.FOREIGN_DEPENDENCY);
                    assertThat(ex.tasks()).containsExactly("merge");
                })
                .hasMessageContaining("task 'merge' of graph 'mine' depends on task 'load' of graph 'other'");
        Task<Integer> mine = g.task("x").cpu(ctx -> 3);
        assertThatThrownBy(() -> mine.after(foreign))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'x'");
    }

    @Test
    void anUnknownDependencyNameIsReportedAndTheGraphStaysOpenToBeFixed() {
        TaskGraph g = TaskGraph.named("g");
        g.task("merge").after("load").cpu(ctx -> 1);
        assertThatThrownBy(g::compile)
                .isInstanceOfSatisfying(GraphValidationException.class, ex -> {
                    assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.UNKNOWN_DEPENDENCY);
                    assertThat(ex.tasks()).containsExactly("merge");
                })
                .hasMessageContaining(
                        "task 'merge' depends on 'load', which is not a task, group or barrier of graph 'g'");
        assertThat(g.isFrozen()).isFalse();
        g.task("load").cpu(ctx -> 0);
        GraphTopology c = g.compile();
        assertThat(c.predecessorNames(0)).containsExactly("load");
        assertThat(g.isFrozen()).isTrue();
    }

    @Test
    void aTaskWithoutABodyIsRejectedNamingIt() {
        TaskGraph g = TaskGraph.named("g");
        assertThatThrownBy(() -> g.task("empty").cpu(null))
                .isInstanceOfSatisfying(
                        GraphValidationException.class,
                        ex -> assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.MISSING_BODY))
                .hasMessageContaining("task 'empty' of graph 'g' has no body");
        assertThatThrownBy(() -> g.task("half").bodies(ctx -> 1, null))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'half'");
        assertThatThrownBy(() -> g.group("grp", 2, (i, t) -> null))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("grp[0]");
        assertThat(g.size()).as("a failed group leaves nothing behind").isZero();
    }

    @Test
    void invalidSettingsAreRejectedNamingTheTaskAndWhatIsAccepted() {
        TaskGraph g = TaskGraph.named("g");
        assertThatThrownBy(() -> g.task("r").retries(-1))
                .isInstanceOfSatisfying(
                        GraphValidationException.class,
                        ex -> assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.INVALID_SETTING))
                .hasMessageContaining("task 'r'")
                .hasMessageContaining("retries must be between 0 and 2147483646, was -1");
        assertThatThrownBy(() -> g.task("r").retries(Integer.MAX_VALUE))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'r'")
                .hasMessageContaining("between 0 and 2147483646, was 2147483647");
        assertThatThrownBy(() -> g.task("t").timeout(Duration.ofSeconds(-1)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 't'")
                .hasMessageContaining("timeout must be between 1 ms and 36525 days");
        assertThatThrownBy(() -> g.task("t").timeout(Duration.ofNanos(500)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("between 1 ms and");
        assertThatThrownBy(() -> g.task("t").timeout(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 't'")
                .hasMessageContaining("timeout must be between 1 ms and 36525 days (100 years)");
        assertThatThrownBy(() -> g.task("c").cost(Duration.ofDays(400 * 365L)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'c'")
                .hasMessageContaining("estimated cost must be between 0 and");
        assertThatThrownBy(() -> g.task("p").priority(-3))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'p'")
                .hasMessageContaining("was -3");
        assertThatThrownBy(() -> g.task("b").retries(2, Duration.ofMillis(-5)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("backoff");
        assertThatThrownBy(() -> g.task("b").retries(2, Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'b'")
                .hasMessageContaining("retry backoff must be between 0 and 36525 days");
        assertThatThrownBy(() -> g.task("c").cost(Duration.ofMillis(-1)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("estimated cost");
        assertThatThrownBy(() -> g.task("io").resource("io", 0))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("resource 'io'");
        assertThatThrownBy(() -> g.group("grp", -1, (i, t) -> t.cpu(ctx -> i)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("size must be 0 or more");
        assertThat(g.size()).isZero();
    }

    @Test
    void theGraphIsFrozenAfterCompilation() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        g.compile();
        assertThatThrownBy(() -> g.task("b").cpu(ctx -> 2))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("graph 'g' has been submitted and is frozen");
        assertThatThrownBy(() -> a.after("x")).isInstanceOf(IllegalStateException.class);
        assertThat(g.compile()).isSameAs(g.compile());
    }

    @Test
    void compilationCollapsesDuplicateDependenciesAndBuildsTheIntIndexedForm() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        TaskGroup<Integer> grp = g.group("s", 3, (i, t) -> t.after(a).cpu(ctx -> i));
        Task<Integer> m = g.task("m").after(grp).after(a, a).after("s", "a").cpu(ctx -> 0);
        GraphTopology c = g.compile();
        assertThat(c.size()).isEqualTo(5);
        assertThat(c.inDegree(m.index())).isEqualTo(4);
        assertThat(c.edgeCount()).isEqualTo(3 + 4);
        assertThat(c.rootCount()).isOne();
        assertThat(c.root(0)).isEqualTo(a.index());
        assertThat(c.dependsOn(m.index(), a.index())).isTrue();
        for (Task<Integer> member : grp.members()) {
            assertThat(c.dependsOn(m.index(), member.index())).isTrue();
        }
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < c.size(); k++) {
            order.add(c.topological(k));
        }
        assertThat(order.indexOf(a.index())).isLessThan(order.indexOf(grp.get(1).index()));
        assertThat(order.indexOf(grp.get(2).index())).isLessThan(order.indexOf(m.index()));
        assertThat(grp.get(1).name()).isEqualTo("s[1]");
        assertThat(grp.get(1).statisticsName()).isEqualTo("s");
    }

    @Test
    void aMillionTaskChainValidatesWithoutDeepRecursion() {
        TaskGraph g = TaskGraph.named("chain");
        Task<Integer> prev = g.task("n0").cpu(ctx -> 0);
        for (int i = 1; i < 1_000_000; i++) {
            prev = g.task("n" + i).after(prev).cpu(ctx -> 0);
        }
        // close the loop to exercise cycle finding over a million tasks as well
        g.find("n0").orElseThrow().after("n999999");
        GraphValidationException ex = catchThrowableOfType(GraphValidationException.class, g::compile);
        assertThat(ex.tasks()).hasSize(1_000_000);
    }

    @Test
    void addingTasksIsThreadSafe() throws Exception {
        TaskGraph g = TaskGraph.named("concurrent");
        int threads = 4;
        int perThread = 5_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            int id = t;
            pool.execute(() -> {
                try {
                    start.await();
                } catch (InterruptedException ex) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    g.task("t" + id + "-" + i)
                            .after(i == 0 ? new String[0] : new String[] {"t" + id + "-" + (i - 1)})
                            .cpu(ctx -> 0);
                }
            });
        }
        start.countDown();
        pool.shutdown();
        assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        CompiledGraph c = CompiledGraph.of(g);
        assertThat(g.compile().size()).isEqualTo(threads * perThread);
        assertThat(c.topology().rootCount()).isEqualTo(threads);
        for (int i = 0; i < c.size(); i++) {
            assertThat(c.task(i).index()).isEqualTo(i);
        }
    }

    @Test
    void aGraphWithManyMoreEdgesThanTasksCompiles() {
        int n = 12;
        TaskGraph g = TaskGraph.named("dense");
        Task<?>[] tasks = new Task<?>[n];
        for (int i = 0; i < n; i++) {
            TaskBuilder b = g.task("t" + i);
            for (int p = 0; p < i; p++) {
                b.after(tasks[p]);
            }
            tasks[i] = b.cpu(ctx -> 1);
        }
        GraphTopology t = g.compile();
        assertThat(t.edgeCount()).isEqualTo(n * (n - 1) / 2);
        assertThat(t.inDegree(n - 1)).isEqualTo(n - 1);
        assertThat(t.predecessorNames(n - 1)).hasSize(n - 1).startsWith("t0").endsWith("t10");
        assertThat(t.topological(n - 1)).isEqualTo(n - 1);
    }

    @Test
    void aCycleAfterTasksThatAreFineNamesOnlyTheTasksOnIt() {
        TaskGraph g = TaskGraph.named("late-cycle");
        Task<Integer> fine = g.task("fine").cpu(ctx -> 1);
        g.task("x").after(fine).after("y").cpu(ctx -> 2);
        g.task("y").after("x").cpu(ctx -> 3);
        GraphValidationException ex = catchThrowableOfType(GraphValidationException.class, g::compile);
        assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.CYCLE);
        assertThat(ex.tasks()).containsExactlyInAnyOrder("x", "y");
        assertThat(ex.getMessage()).containsAnyOf("x -> y -> x", "y -> x -> y");
    }

    @Test
    void aGraphWithManyProblemsReportsTheFirstTenAndCountsTheRest() {
        TaskGraph g = TaskGraph.named("g");
        for (int i = 0; i < 12; i++) {
            g.task("t" + i).after("missing" + i).cpu(ctx -> 1);
        }
        GraphValidationException ex = catchThrowableOfType(GraphValidationException.class, g::compile);
        assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.UNKNOWN_DEPENDENCY);
        assertThat(ex.tasks()).hasSize(12);
        assertThat(ex.getMessage())
                .startsWith("graph 'g' is not valid: task 't0' depends on 'missing0', which is not a task, group or"
                        + " barrier of graph 'g'; task 't1' depends on 'missing1'")
                .contains("; task 't9' depends on 'missing9'")
                .doesNotContain("'t10'")
                .endsWith("of graph 'g'; and 2 more");

        TaskGraph ten = TaskGraph.named("ten");
        for (int i = 0; i < 10; i++) {
            ten.task("t" + i).after("missing" + i).cpu(ctx -> 1);
        }
        assertThat(catchThrowableOfType(GraphValidationException.class, ten::compile)
                        .getMessage())
                .contains("task 't9' depends on 'missing9'")
                .endsWith("of graph 'ten'");
    }
}
