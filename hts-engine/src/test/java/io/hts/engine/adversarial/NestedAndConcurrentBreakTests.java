package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NestedAndConcurrentBreakTests {

    static final Duration MAX = Duration.ofSeconds(60);

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(5));
    }

    static long htsThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("brk-"))
                .count();
    }

    static TaskGraph tree(int depth, int width, AtomicInteger leaves, int failEvery, long spinMillis) {
        TaskGraph g = TaskGraph.named("tree-" + depth);
        TaskGroup<Integer> grp = g.group(
                "n",
                width,
                (i, t) -> t.cpu(ctx -> {
                    if (depth == 0) {
                        int n = leaves.incrementAndGet();
                        if (spinMillis > 0) {
                            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(spinMillis);
                            while (System.nanoTime() < until && !ctx.isCancelled()) {
                                Thread.onSpinWait();
                            }
                        }
                        if (failEvery > 0 && n % failEvery == 0) {
                            throw new IllegalStateException("leaf " + n + " failed");
                        }
                        return 1;
                    }
                    TaskGraph sub = tree(depth - 1, width, leaves, failEvery, spinMillis);
                    var results = ctx.execute(sub);
                    @SuppressWarnings("unchecked")
                    Task<Integer> sum = (Task<Integer>) sub.find("sum").orElseThrow();
                    return results.result(sum);
                }));
        g.task("sum")
                .after(grp)
                .cpu(ctx -> ctx.inputs(grp).stream().mapToInt(x -> x).sum());
        return g;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void deepAndWideNestedRunsSucceed(int workers) {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder()
                    .threads(workers)
                    .threadNamePrefix("brk-")
                    .build();
            try {
                AtomicInteger leaves = new AtomicInteger();
                TaskGraph g = tree(3, 4, leaves, 0, 0);
                GraphRun run = s.submit(g);
                assertThat(Checks.awaitEnd(run, Duration.ofSeconds(30))).isNull();
                @SuppressWarnings("unchecked")
                Task<Integer> sum = (Task<Integer>) g.find("sum").orElseThrow();
                assertThat(run.result(sum)).isEqualTo(256);
            } finally {
                closeQuietly(s);
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> htsThreads() == 0);
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void nestedRunsWithFailuresAndOuterCancelsAtRandomMomentsAlwaysEnd(int workers) {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder()
                    .threads(workers)
                    .threadNamePrefix("brk-")
                    .build();
            try {
                SplittableRandom random = new SplittableRandom(workers * 31L);
                for (int round = 0; round < 30; round++) {
                    AtomicInteger leaves = new AtomicInteger();
                    TaskGraph g = tree(2 + random.nextInt(2), 3, leaves, random.nextInt(4) == 0 ? 7 : 0, 1);
                    GraphRun run = s.submit(g);
                    for (int spins = random.nextInt(200_000); spins > 0; spins--) {
                        Thread.onSpinWait(); // a random moment for the cancel below, without sleeping
                    }
                    int what = random.nextInt(3);
                    if (what == 0) {
                        run.cancel();
                    } else if (what == 1) {
                        @SuppressWarnings("unchecked")
                        Task<Integer> sum = (Task<Integer>) g.find("n[1]").orElseThrow();
                        run.cancel(sum);
                    }
                    Checks.awaitEnd(run, Duration.ofSeconds(20));
                    Checks.assertConsistent(run);
                    assertThat(s.activeRuns())
                            .as("round %s: nested runs left active", round)
                            .isEmpty();
                }
            } finally {
                closeQuietly(s);
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> htsThreads() == 0);
        });
    }

    @Test
    void aParentTimingOutWhileItsNestedBodyIgnoresInterruptsEndsTheOuterRunAtTheTimeOut() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s =
                    Scheduler.builder().threads(1).threadNamePrefix("brk-").build();
            try {
                TaskGraph inner = TaskGraph.named("inner");
                inner.task("stubborn").cpu(ctx -> {
                    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    return 1;
                });
                TaskGraph outer = TaskGraph.named("outer");
                Task<Object> parent =
                        outer.task("parent").timeout(Duration.ofMillis(100)).cpu(ctx -> ctx.execute(inner));
                long t0 = System.nanoTime();
                GraphRun run = s.submit(outer);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertThat(ex).isNotNull();
                assertThat(ex.getCause()).isInstanceOf(TimeoutException.class);
                assertThat(ms)
                        .as("the run ends when the time-out has failed the task")
                        .isLessThan(1000);
                Checks.assertConsistent(run);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aNestedGraphThatFailsValidationFailsTheParentWithTheValidationError() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s =
                    Scheduler.builder().threads(1).threadNamePrefix("brk-").build();
            try {
                TaskGraph inner = TaskGraph.named("invalid");
                inner.task("x").after("nope").cpu(ctx -> 1);
                TaskGraph outer = TaskGraph.named("outer-invalid");
                Task<Object> parent = outer.task("parent").cpu(ctx -> ctx.execute(inner));
                GraphRun run = s.submit(outer);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                assertThat(ex.getCause()).isInstanceOf(GraphValidationException.class);
                Checks.assertConsistent(run);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void crossSchedulerWaitsInsideBodiesFinish() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler a =
                    Scheduler.builder().threads(1).threadNamePrefix("brk-a-").build();
            Scheduler b =
                    Scheduler.builder().threads(1).threadNamePrefix("brk-b-").build();
            try {
                for (int k = 0; k < 10; k++) {
                    TaskGraph leaf = TaskGraph.named("leaf-" + k);
                    Task<Integer> one = leaf.task("one").cpu(ctx -> 1);
                    TaskGraph onB = TaskGraph.named("onB-" + k);
                    Task<Integer> viaA =
                            onB.task("viaA").cpu(ctx -> a.submit(leaf).await().result(one) + 1);
                    TaskGraph onA = TaskGraph.named("onA-" + k);
                    Task<Integer> top =
                            onA.task("top").cpu(ctx -> b.submit(onB).await().result(viaA) + 1);
                    GraphRun run = a.submit(onA);
                    assertThat(Checks.awaitEnd(run, Duration.ofSeconds(10))).isNull();
                    assertThat(run.result(top)).isEqualTo(3);
                }
            } finally {
                closeQuietly(a);
                closeQuietly(b);
            }
        });
    }

    @Test
    void hundredsOfConcurrentRunsOfOneGraphWithFaultsEachEndConsistently() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s =
                    Scheduler.builder().threads(2).threadNamePrefix("brk-").build();
            try {
                TaskGraph g = TaskGraph.named("shared");
                Task<Long> root = g.task("root").cpu(ctx -> ctx.runId());
                TaskGroup<Long> mid = g.group(
                        "mid",
                        8,
                        (i, t) -> t.after(root)
                                .retries(1, Duration.ofMillis(1))
                                .timeout(Duration.ofMillis(500))
                                .cpu(ctx -> {
                                    long id = ctx.input(root);
                                    int roll = ThreadLocalRandom.current().nextInt(100);
                                    if (roll < 5) {
                                        throw new IllegalStateException("run " + id + " member " + i + " failed");
                                    }
                                    if (roll < 10) {
                                        Blocking.untilInterrupted(Duration.ofMillis(2));
                                    }
                                    return id * 100 + i;
                                }));
                Task<Long> sink = g.task("sink").after(mid, root).cpu(ctx -> {
                    long id = ctx.input(root);
                    List<Long> in = ctx.inputs(mid);
                    for (int i = 0; i < in.size(); i++) {
                        if (in.get(i) != id * 100 + i) {
                            throw new AssertionError("run " + id + " read another run's result " + in.get(i));
                        }
                    }
                    return id;
                });
                List<GraphRun> runs = new ArrayList<>();
                SplittableRandom random = new SplittableRandom(3);
                for (int k = 0; k < 400; k++) {
                    GraphRun r = s.submit(
                            g, RunOptions.failureMode(k % 2 == 0 ? FailureMode.FAIL_FAST : FailureMode.CONTINUE));
                    runs.add(r);
                    if (random.nextInt(10) == 0) {
                        runs.get(random.nextInt(runs.size())).cancel();
                    }
                    if (random.nextInt(10) == 0) {
                        runs.get(random.nextInt(runs.size())).cancel(mid.get(random.nextInt(8)));
                    }
                }
                for (GraphRun r : runs) {
                    GraphRunException ex = Checks.awaitEnd(r, Duration.ofSeconds(30));
                    Checks.assertConsistent(r);
                    if (r.status() == RunStatus.SUCCEEDED) {
                        assertThat(r.result(sink)).isEqualTo(r.runId());
                    } else {
                        assertThat(ex).isNotNull();
                        if (r.status() == RunStatus.FAILED) {
                            assertThat(ex.getCause()).isNotNull();
                            assertThat(ex.getCause()).isNotInstanceOf(AssertionError.class);
                        }
                    }
                }
                assertThat(s.activeRuns()).isEmpty();
            } finally {
                closeQuietly(s);
            }
        });
    }
}
