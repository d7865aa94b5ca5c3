package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBarrier;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class GraphShapeBreakTests {

    static final Duration MAX = Duration.ofSeconds(20);

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(3));
    }

    @Test
    void duplicateDependenciesInEveryFormStillRunTheTaskOnceAfterItsDependencies() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("dups");
                Task<Integer> a = g.task("a").cpu(ctx -> {
                    Blocking.untilInterrupted(Duration.ofMillis(20));
                    return 1;
                });
                TaskGroup<Integer> grp =
                        g.group("grp", 3, (i, t) -> t.after(a).after(a).cpu(ctx -> ctx.input(a) + i));
                TaskBarrier bar = g.barrier("bar").after(a, a, grp, grp.get(1));
                Task<Integer> b = g.task("b")
                        .after(a, a)
                        .after("a")
                        .after(grp)
                        .after(grp.get(0), grp.get(2))
                        .after("grp")
                        .after(bar, bar)
                        .after("bar")
                        .cpu(ctx -> ctx.input(a) * 100
                                + ctx.inputs(grp).stream().mapToInt(x -> x).sum());
                b.after(a).after("grp[1]");
                for (int k = 0; k < 20; k++) {
                    GraphRun run = s.submit(g);
                    assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                    Checks.assertConsistent(run);
                    assertThat(run.result(b)).isEqualTo(100 + 1 + 2 + 3);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void inputsOfAGroupWhoseMembersAreDeclaredInterleavedComeInIndexOrder() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("interleaved");
                Task<Integer> x = g.task("x").cpu(ctx -> -1);
                TaskGroup<Integer> grp = g.group("grp", 4, (i, t) -> t.cpu(ctx -> i * 10));
                Task<Integer> y = g.task("y").cpu(ctx -> -2);
                Task<List<Integer>> c = g.task("c")
                        .after(y, grp.get(3), x, grp.get(1))
                        .after(grp.get(0))
                        .after(grp.get(2))
                        .cpu(ctx -> ctx.inputs(grp));
                TaskGroup<Integer> empty = g.group("empty", 0, (i, t) -> t.cpu(ctx -> i));
                Task<Integer> e =
                        g.task("e").after(empty).cpu(ctx -> ctx.inputs(empty).size());
                GraphRun run = s.submit(g);
                assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                assertThat(run.result(c)).containsExactly(0, 10, 20, 30);
                assertThat(run.result(e)).isZero();
                assertThat(run.results(empty)).isEmpty();
                assertThat(run.whenDone(empty).get()).isEmpty();
                assertThat(run.whenDone(grp).get()).containsExactly(0, 10, 20, 30);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aBarrierOnlyGraphAndABarrierWithoutDependenciesSucceed() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(1).build();
            try {
                TaskGraph g = TaskGraph.named("barriers");
                TaskBarrier b1 = g.barrier("b1");
                TaskBarrier b2 = g.barrier("b2").after(b1);
                GraphRun run = s.submit(g);
                assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                Checks.assertConsistent(run);
                assertThat(run.state(b2.task())).isEqualTo(TaskState.SUCCEEDED);
                run.cancel(b1.task());
                assertThat(run.status().isDone()).isTrue();
            } finally {
                closeQuietly(s);
            }
        });
    }
}
