package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBarrier;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SchedulerTests {

    private final Scheduler scheduler = Scheduler.builder().threads(4).build();

    @AfterEach
    void close() {
        scheduler.close();
    }

    @Test
    void aSingleTaskReturnsItsValue() {
        TaskGraph g = TaskGraph.named("single");
        Task<String> hello = g.task("hello").cpu(ctx -> "hello " + ctx.taskName());
        GraphRun run = scheduler.execute(g);
        assertThat(run.result(hello)).isEqualTo("hello hello");
        assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.state(hello)).isEqualTo(TaskState.SUCCEEDED);
    }

    @Test
    void aChainPassesOutputDownstream() {
        TaskGraph g = TaskGraph.named("chain");
        Task<Integer> a = g.task("a").cpu(ctx -> 2);
        Task<Integer> b = g.task("b").after(a).cpu(ctx -> ctx.input(a) * 10);
        Task<String> c = g.task("c").after(b).cpu(ctx -> "=" + (ctx.input(b) + 1));
        assertThat(scheduler.execute(g).result(c)).isEqualTo("=21");
    }

    @Test
    void theDiamondRunsItsJoinExactlyOnceAfterBothBranches() {
        for (int rep = 0; rep < 200; rep++) {
            AtomicInteger dRuns = new AtomicInteger();
            AtomicInteger branchesDone = new AtomicInteger();
            TaskGraph g = TaskGraph.named("diamond");
            Task<Integer> a = g.task("A").cpu(ctx -> 1);
            Task<Integer> b = g.task("B").after(a).cpu(ctx -> {
                branchesDone.incrementAndGet();
                return ctx.input(a) + 1;
            });
            Task<Integer> c = g.task("C").after(a).cpu(ctx -> {
                branchesDone.incrementAndGet();
                return ctx.input(a) + 2;
            });
            Task<Integer> d = g.task("D").after(b, c).cpu(ctx -> {
                assertThat(branchesDone.get()).isEqualTo(2);
                dRuns.incrementAndGet();
                return ctx.input(b) + ctx.input(c);
            });
            assertThat(scheduler.execute(g).result(d)).isEqualTo(5);
            assertThat(dRuns.get()).isOne();
        }
    }

    @Test
    void aHighPriorityTaskSubmittedToABusySingleWorkerPoolRunsBeforeQueuedNormalOnes() throws Exception {
        try (Scheduler single = Scheduler.builder().threads(1).build()) {
            CountDownLatch blocking = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
            TaskGraph normal = TaskGraph.named("normal");
            normal.task("blocker").cpu(ctx -> {
                blocking.countDown();
                release.await();
                return null;
            });
            for (int i = 0; i < 10; i++) {
                String name = "normal-" + i;
                normal.task(name).cpu(ctx -> order.add(name));
            }
            GraphRun first = single.submit(normal);
            assertThat(blocking.await(10, TimeUnit.SECONDS)).isTrue();
            TaskGraph urgent = TaskGraph.named("urgent");
            urgent.task("urgent").priority(10).cpu(ctx -> order.add("urgent"));
            GraphRun second = single.submit(urgent);
            release.countDown();
            first.await();
            second.await();
            assertThat(order).hasSize(11);
            assertThat(order.peek()).isEqualTo("urgent");
        }
    }

    @Test
    void aThrowingTaskLeavesItsDescendantsCancelledAndFailsTheRunWithThatCause() {
        TaskGraph g = TaskGraph.named("failing");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        Task<Integer> boom = g.task("boom").after(a).cpu(ctx -> {
            throw new IllegalStateException("disk on fire");
        });
        Task<Integer> child = g.task("child").after(boom).cpu(ctx -> 2);
        Task<Integer> grandchild = g.task("grandchild").after(child).cpu(ctx -> 3);
        GraphRun run = scheduler.submit(g);
        assertThatThrownBy(run::await)
                .isInstanceOfSatisfying(GraphRunException.class, ex -> {
                    assertThat(ex.status()).isEqualTo(RunStatus.FAILED);
                    assertThat(ex.failures()).extracting(TaskFailure::taskName).containsExactly("boom");
                    assertThat(ex.cancelled()).containsExactlyInAnyOrder("child", "grandchild");
                })
                .hasMessageContaining("run " + run.runId() + " of graph 'failing' failed: 1 task failed [boom:")
                .hasRootCauseInstanceOf(IllegalStateException.class)
                .hasRootCauseMessage("disk on fire");
        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.state(a)).isEqualTo(TaskState.SUCCEEDED);
        assertThat(run.state(boom)).isEqualTo(TaskState.FAILED);
        assertThat(run.state(child)).isEqualTo(TaskState.CANCELLED);
        assertThat(run.state(grandchild)).isEqualTo(TaskState.CANCELLED);
        assertThat(run.error(child))
                .get()
                .isInstanceOf(io.hts.engine.graph.TaskCancelledException.class)
                .satisfies(e -> assertThat(e.getCause()).hasMessage("disk on fire"));
        assertThatThrownBy(() -> run.result(child))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("task 'child' of run " + run.runId() + " has no result: it is CANCELLED");
    }

    @Test
    void theSameGraphRunOneHundredTimesGivesTheSameResults() {
        TaskGraph g = TaskGraph.named("repeat");
        Task<Integer> seed = g.task("seed").cpu(ctx -> 7);
        TaskGroup<Integer> squares = g.group("sq", 16, (i, t) -> t.after(seed).cpu(ctx -> ctx.input(seed) * i * i));
        Task<Integer> sum = g.task("sum")
                .after(squares)
                .cpu(ctx ->
                        ctx.inputs(squares).stream().mapToInt(Integer::intValue).sum());
        List<Integer> sums = new ArrayList<>();
        List<List<Integer>> groups = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            GraphRun run = scheduler.execute(g);
            sums.add(run.result(sum));
            groups.add(run.results(squares));
        }
        assertThat(sums).containsOnly(7 * 1240);
        assertThat(groups)
                .allSatisfy(l -> assertThat(l)
                        .containsExactly(0, 7, 28, 63, 112, 175, 252, 343, 448, 567, 700, 847, 1008, 1183, 1372, 1575));
    }

    @Test
    void fiftyConcurrentRunsOfOneGraphOnFourWorkersCountEveryTaskExactlyOnce() {
        int width = 200;
        AtomicIntegerArray counts = new AtomicIntegerArray(width + 2);
        TaskGraph g = TaskGraph.named("shared");
        Task<Long> src = g.task("src").cpu(ctx -> {
            counts.incrementAndGet(0);
            return ctx.runId();
        });
        TaskGroup<Long> mid = g.group(
                "mid",
                width,
                (i, t) -> t.after(src).cpu(ctx -> {
                    counts.incrementAndGet(i + 1);
                    return ctx.input(src) * 1000 + i;
                }));
        Task<Long> sink = g.task("sink").after(mid).cpu(ctx -> {
            counts.incrementAndGet(width + 1);
            long s = 0;
            for (long v : ctx.inputs(mid)) {
                s += v;
            }
            return s;
        });
        List<GraphRun> runs = new ArrayList<>();
        for (int r = 0; r < 50; r++) {
            runs.add(scheduler.submit(g));
        }
        for (GraphRun run : runs) {
            run.await();
            long expected = run.runId() * 1000 * width + (long) width * (width - 1) / 2;
            assertThat(run.result(sink)).as("each run sees its own results").isEqualTo(expected);
        }
        for (int i = 0; i < width + 2; i++) {
            assertThat(counts.get(i)).as("task %d", i).isEqualTo(50);
        }
    }

    @Test
    void aMillionTaskChainRunsWithoutStackOverflow() {
        TaskGraph g = TaskGraph.named("long-chain");
        Task<Integer> prev = g.task("n0").cpu(ctx -> 0);
        for (int i = 1; i < 1_000_000; i++) {
            Task<Integer> p = prev;
            prev = g.task("n" + i).after(p).cpu(ctx -> ctx.input(p) + 1);
        }
        assertThat(scheduler.execute(g).result(prev)).isEqualTo(999_999);
    }

    @Test
    void aMillionIndependentTasksAllRunOnce() {
        LongAdder ran = new LongAdder();
        TaskGraph g = TaskGraph.named("flat");
        g.group(
                "t",
                1_000_000,
                (i, t) -> t.cpu(ctx -> {
                    ran.increment();
                    return null;
                }));
        GraphRun run = scheduler.execute(g);
        assertThat(ran.sum()).isEqualTo(1_000_000);
        assertThat(run.pendingTasks()).isZero();
    }

    @Test
    void barriersJoinAndGroupsConnectAsOne() {
        TaskGraph g = TaskGraph.named("barrier");
        AtomicInteger loaded = new AtomicInteger();
        TaskGroup<Integer> loads = g.group(
                "load",
                8,
                (i, t) -> t.cpu(ctx -> {
                    loaded.incrementAndGet();
                    return i;
                }));
        TaskBarrier all = g.barrier("all-loaded").after(loads);
        Task<Integer> after = g.task("after").after(all).cpu(ctx -> loaded.get());
        GraphRun run = scheduler.execute(g);
        assertThat(run.result(after)).isEqualTo(8);
        assertThat(run.state(all.task())).isEqualTo(TaskState.SUCCEEDED);
        assertThat(run.results(loads)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    }

    @Test
    void readingAnUpstreamThatIsNotADependencyIsAClearError() {
        TaskGraph g = TaskGraph.named("wrong-input");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        Task<Integer> b = g.task("b").after(a).cpu(ctx -> 2);
        Task<Integer> c = g.task("c").after(b).cpu(ctx -> ctx.input(a));
        GraphRun run = scheduler.submit(g);
        assertThatThrownBy(run::await)
                .isInstanceOf(GraphRunException.class)
                .hasRootCauseInstanceOf(IllegalArgumentException.class)
                .rootCause()
                .hasMessageContaining("task 'c' reads the result of task 'a'")
                .hasMessageContaining("[b]");
        assertThat(run.state(c)).isEqualTo(TaskState.FAILED);
    }

    @Test
    void awaitWithATimeoutReportsTheUnfinishedRun() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("slow");
        g.task("wait").cpu(ctx -> release.await(30, TimeUnit.SECONDS));
        GraphRun run = scheduler.submit(g);
        assertThatThrownBy(() -> run.await(Duration.ofMillis(50)))
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining("did not finish within")
                .hasMessageContaining("1 task unfinished");
        release.countDown();
        assertThat(run.await(Duration.ofSeconds(30)).status()).isEqualTo(RunStatus.SUCCEEDED);
    }

    @Test
    void whenDoneCompletesPerTaskAndPerGroup() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("watch");
        Task<Integer> first = g.task("first").cpu(ctx -> 1);
        TaskGroup<Integer> grp = g.group("g", 3, (i, t) -> t.after(first).cpu(ctx -> i * 2));
        g.task("last").after(grp).cpu(ctx -> release.await(30, TimeUnit.SECONDS));
        GraphRun run = scheduler.submit(g);
        assertThat(run.whenDone(first).get(30, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(run.whenDone(grp).get(30, TimeUnit.SECONDS)).containsExactly(0, 2, 4);
        assertThat(run.isDone()).isFalse();
        release.countDown();
        run.await();
        assertThat(run.future().get(30, TimeUnit.SECONDS)).isSameAs(run);
    }

    @Test
    void statesListEveryTaskInGraphOrder() {
        TaskGraph g = TaskGraph.named("states");
        g.task("x").cpu(ctx -> 1);
        g.task("y").after("x").cpu(ctx -> 2);
        Map<String, TaskState> states = scheduler.execute(g).states();
        assertThat(states).containsExactly(Map.entry("x", TaskState.SUCCEEDED), Map.entry("y", TaskState.SUCCEEDED));
    }

    @Test
    void anEmptyGraphSucceedsAtOnce() {
        assertThat(scheduler.execute(TaskGraph.named("empty")).status()).isEqualTo(RunStatus.SUCCEEDED);
    }

    @Test
    void tasksMaySubmitNestedRunsFromTheirBodies() {
        TaskGraph inner = TaskGraph.named("inner");
        Task<Integer> leaf = inner.task("leaf").cpu(ctx -> 41);
        inner.compile();
        TaskGraph outer = TaskGraph.named("outer");
        Task<Integer> parent = outer.task("parent")
                .cpu(ctx -> scheduler
                        .submit(inner)
                        .future()
                        .thenApply(r -> r.result(leaf) + 1)
                        .get());
        assertThat(scheduler.execute(outer).result(parent)).isEqualTo(42);
    }

    @Test
    void anInterruptABodyLeavesBehindReachesNeitherTheNextTaskNorTheIdleWorker() throws Exception {
        try (Scheduler single = Scheduler.builder()
                .threads(1)
                .threadNamePrefix("interrupt-test-")
                .build()) {
            TaskGraph g = TaskGraph.named("self-interrupt");
            Task<Boolean> rude = g.task("rude").cpu(ctx -> {
                Thread.currentThread().interrupt();
                return true;
            });
            Task<Boolean> next =
                    g.task("next").after(rude).cpu(ctx -> Thread.currentThread().isInterrupted());
            assertThat(single.execute(g).result(next)).isFalse();
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> Thread.getAllStackTraces().keySet().stream()
                            .filter(t -> t.getName().equals("interrupt-test-0"))
                            .allMatch(t -> t.getState() == Thread.State.WAITING));
        }
    }

    @Test
    void validateSaysWhyAGraphCannotRunHereWithoutStartingARun() {
        TaskGraph gpuOnly = TaskGraph.named("gpu-only");
        gpuOnly.task("kernel").gpu(ctx -> 1);
        assertThatThrownBy(() -> scheduler.validate(gpuOnly))
                .isInstanceOf(io.hts.engine.graph.GraphValidationException.class)
                .hasMessageContaining("kernel");
        TaskGraph fine = TaskGraph.named("fine");
        Task<Integer> one = fine.task("one").cpu(ctx -> 1);
        scheduler.validate(fine);
        assertThat(scheduler.activeRuns()).isEmpty();
        assertThat(scheduler.eventLog().orElseThrow().recent(10)).isEmpty();
        assertThat(scheduler.execute(fine).result(one))
                .as("a validated graph runs")
                .isEqualTo(1);
    }
}
