package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A run's profile lists every task, with its final state and, when it failed or was cancelled, why. */
class RunProfileCausesTests {

    private static Map<String, TaskTiming> byName(RunProfile p) {
        return p.tasks().stream().collect(Collectors.toMap(TaskTiming::taskName, Function.identity()));
    }

    @ParameterizedTest(name = "profiling {0}")
    @ValueSource(booleans = {true, false})
    void aFailedRunsProfileHasEveryTaskWithItsStateAndCause(boolean profiling) {
        try (Scheduler s = Scheduler.builder().threads(2).profiling(profiling).build()) {
            TaskGraph g = TaskGraph.named("four");
            Task<Integer> prepare = g.task("prepare").cpu(ctx -> 1);
            Task<Integer> boom = g.task("boom").after(prepare).cpu(ctx -> {
                throw new IllegalStateException("bad input in row 7");
            });
            Task<Integer> child = g.task("child").after(boom).cpu(ctx -> 2);
            g.task("grandchild").after(child).cpu(ctx -> 3);
            GraphRun run = s.submit(g);
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            Map<String, TaskTiming> tasks = byName(run.profile());
            assertThat(tasks).as("profiling %s", profiling).containsOnlyKeys("prepare", "boom", "child", "grandchild");
            assertThat(tasks.get("prepare").state()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(tasks.get("prepare").cause()).isNull();
            assertThat(tasks.get("boom").state()).isEqualTo(TaskState.FAILED);
            assertThat(tasks.get("boom").cause()).isEqualTo("java.lang.IllegalStateException: bad input in row 7");
            for (String name : List.of("child", "grandchild")) {
                assertThat(tasks.get(name).state()).isEqualTo(TaskState.CANCELLED);
                assertThat(tasks.get(name).cause()).as(name).contains("boom");
                assertThat(tasks.get(name).ran()).isFalse();
            }
            if (profiling) {
                assertThat(s.profiler().run(run.runId()))
                        .get()
                        .satisfies(kept -> assertThat(byName(kept).get("boom").cause())
                                .isEqualTo("java.lang.IllegalStateException: bad input in row 7"));
            }
        }
    }

    @Test
    void aSucceededRunHasNoCausesAndACancelledRunNamesTheCancel() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph ok = TaskGraph.named("ok");
            ok.task("a").cpu(ctx -> 1);
            assertThat(s.execute(ok).profile().tasks())
                    .allSatisfy(t -> assertThat(t.cause()).isNull());

            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            TaskGraph g = TaskGraph.named("cancelled");
            Task<Integer> first = g.task("first").cpu(ctx -> {
                started.countDown();
                while (!ctx.isCancelled()) {
                    Thread.onSpinWait();
                }
                throw new IllegalStateException("stopped on request");
            });
            g.task("second").after(first).cpu(ctx -> 2);
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            started.await();
            run.cancel();
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            Map<String, TaskTiming> tasks = byName(run.profile());
            assertThat(tasks.get("second").state()).isEqualTo(TaskState.CANCELLED);
            assertThat(tasks.get("second").cause()).isNotBlank();
            assertThat(tasks.get("first").cause()).isNotBlank();
        }
    }

    /** Descendants cancelled by one failure share one description: a wide run stays small. */
    @Test
    void oneCauseSharedByManyTasksIsKeptOnce() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("wide");
            Task<Integer> root = g.task("root").cpu(ctx -> {
                throw new IllegalStateException("root failed");
            });
            for (int i = 0; i < 10_000; i++) {
                g.task("leaf" + i).after(root).cpu(ctx -> 1);
            }
            GraphRun run = s.submit(g);
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            RunProfile p = run.profile();
            assertThat(p.tasks()).hasSize(10_001);
            assertThat(p.tasks().stream().map(TaskTiming::cause).distinct().count())
                    .isEqualTo(2);
            // the index (4 bytes a task) and two descriptions, not 10,000 strings
            TaskCauses alone = TaskCauses.collect(
                    p.tasks().size(), i -> i == 0 ? new IllegalStateException("x") : null, Throwable::toString);
            assertThat(alone.estimatedBytes()).isLessThan(4L * 10_001 + 200);
        }
    }

    /**
     * ranTotals counts, per device and final state, exactly the tasks that ran with their total
     * duration, as the per-task timings do: a failed run with tasks that succeeded, one that
     * failed, a group, and cancelled ones that never ran; nothing without profiling.
     */
    @Test
    void ranTotalsAgreeWithThePerTaskTimings() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("totals");
            Task<Integer> prepare = g.task("prepare").cpu(ctx -> 1);
            g.group("part", 5, (k, t) -> t.after(prepare).cpu(ctx -> k));
            Task<Integer> boom = g.task("boom").after(prepare).cpu(ctx -> {
                throw new IllegalStateException("boom");
            });
            g.task("child").after(boom).cpu(ctx -> 2);
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            RunProfile p = run.profile();
            Map<String, long[]> expected = new java.util.TreeMap<>();
            for (TaskTiming t : p.tasks()) {
                if (t.ran()) {
                    long[] e = expected.computeIfAbsent(t.device() + "/" + t.state(), k -> new long[2]);
                    e[0]++;
                    e[1] += t.durationNanos();
                }
            }
            Map<String, long[]> seen = new java.util.TreeMap<>();
            p.ranTotals((device, state, count, nanos) -> {
                assertThat(seen.put(device + "/" + state, new long[] {count, nanos}))
                        .as("once each")
                        .isNull();
            });
            assertThat(seen.keySet())
                    .containsExactly("CPU/FAILED", "CPU/SUCCEEDED")
                    .isEqualTo(expected.keySet());
            seen.forEach((k, v) -> assertThat(v).as(k).containsExactly(expected.get(k)));
            assertThat(seen.get("CPU/SUCCEEDED")[0]).isEqualTo(6);
            assertThat(seen.get("CPU/FAILED")[0]).isEqualTo(1);
        }
        try (Scheduler s = Scheduler.builder().threads(2).profiling(false).build()) {
            TaskGraph g = TaskGraph.named("untimed");
            g.task("a").cpu(ctx -> 1);
            s.execute(g).profile().ranTotals((device, state, count, nanos) -> {
                throw new AssertionError("no timings, no totals: " + device + " " + state);
            });
        }
    }
}
