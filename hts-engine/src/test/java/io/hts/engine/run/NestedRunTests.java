package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.support.FakeGpuBackend;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A task that runs another graph and waits for it: with {@code ctx.execute(graph)} and with
 * {@code run.await()} inside a body, the waiting worker runs other ready tasks, so nested runs
 * finish on any number of workers, however deep; a nested run belongs to its task (cancelling or
 * timing out the task cancels it); an interrupt meant for the waiting body never reaches a task
 * run inside the wait.
 */
class NestedRunTests {

    private record Inner(TaskGraph graph, Task<Integer> sum) {}

    private static Inner inner(String name, int width) {
        TaskGraph g = TaskGraph.named(name);
        Task<Integer> seed = g.task("seed").cpu(ctx -> 1);
        TaskGroup<Integer> fan = g.group("fan", width, (i, t) -> t.after(seed).cpu(ctx -> ctx.input(seed) + i));
        Task<Integer> sum = g.task("sum")
                .after(fan)
                .cpu(ctx -> ctx.inputs(fan).stream().mapToInt(Integer::intValue).sum());
        return new Inner(g, sum);
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2, 4})
    void bodiesThatRunAGraphAndWaitFinishOnAnyNumberOfWorkers(int workers) throws Exception {
        try (Scheduler s = Scheduler.builder().threads(workers).build()) {
            TaskGraph outer = TaskGraph.named("outer");
            Inner in = inner("inner", 8);
            TaskGroup<Integer> waiting = outer.group(
                    "wait",
                    2 * workers + 1,
                    (i, t) -> t.cpu(ctx -> ctx.execute(in.graph()).result(in.sum()) + i));
            GraphRun run = s.submit(outer);
            run.await(Duration.ofSeconds(30));
            int each = 8 + 28; // 1 + i for i in 0..7
            for (int i = 0; i < waiting.size(); i++) {
                assertThat(run.result(waiting.get(i))).isEqualTo(each + i);
            }
        }
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2})
    void awaitingARunOfTheSameSchedulerInsideABodyHelpsInsteadOfBlocking(int workers) throws Exception {
        try (Scheduler s = Scheduler.builder().threads(workers).build()) {
            TaskGraph outer = TaskGraph.named("outer");
            Inner in = inner("inner", 4);
            outer.group(
                    "wait",
                    workers,
                    (i, t) -> t.cpu(ctx -> s.submit(in.graph()).await().status()));
            assertThat(s.submit(outer).await(Duration.ofSeconds(30)).status()).isEqualTo(RunStatus.SUCCEEDED);
        }
    }

    /** Recursion through nested runs: each level waits for the next; far deeper than a worker helps (32). */
    @Test
    void nestingDeeperThanAWorkerHelpsIsCompensatedBySpareWorkers() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            Level top = level(60);
            assertThat(s.submit(top.graph()).await(Duration.ofSeconds(60)).result(top.task()))
                    .isEqualTo(60);
        }
    }

    private record Level(TaskGraph graph, Task<Integer> task) {}

    private static Level level(int levels) {
        TaskGraph g = TaskGraph.named("level-" + levels);
        Task<Integer> t = g.task("t").cpu(ctx -> {
            if (levels == 0) {
                return 0;
            }
            Level next = level(levels - 1);
            return 1 + ctx.execute(next.graph()).result(next.task());
        });
        return new Level(g, t);
    }

    @Test
    void cancellingTheWaitingTaskCancelsItsNestedRun() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            CountDownLatch innerStarted = new CountDownLatch(1);
            TaskGraph in = TaskGraph.named("inner");
            in.task("long").cpu(ctx -> {
                innerStarted.countDown();
                while (!ctx.isCancelled()) {
                    Thread.onSpinWait();
                }
                return 0;
            });
            TaskGraph outer = TaskGraph.named("outer");
            Task<Integer> parent = outer.task("parent").cpu(ctx -> {
                ctx.execute(in);
                return 1;
            });
            GraphRun run = s.submit(outer);
            assertThat(innerStarted.await(10, TimeUnit.SECONDS)).isTrue();
            run.cancel(parent);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
            assertThat(run.state(parent)).isEqualTo(TaskState.CANCELLED);
            await().atMost(Duration.ofSeconds(10)).until(() -> s.activeRuns().isEmpty());
        }
    }

    @Test
    void aTimedOutWaitingTaskCancelsItsNestedRunAndFailsWithItsTimeOut() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph in = TaskGraph.named("inner");
            in.task("spins").cpu(ctx -> {
                while (!ctx.isCancelled()) {
                    Thread.onSpinWait();
                }
                return 0;
            });
            TaskGraph outer = TaskGraph.named("outer");
            Task<Object> parent =
                    outer.task("parent").timeout(Duration.ofMillis(50)).cpu(ctx -> ctx.execute(in));
            GraphRun run = s.submit(outer);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10)))
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(java.util.concurrent.TimeoutException.class);
            assertThat(run.state(parent)).isEqualTo(TaskState.FAILED);
            await().atMost(Duration.ofSeconds(10)).until(() -> s.activeRuns().isEmpty());
        }
    }

    /** The outer run is cancelled while its body waits: the interrupt is kept for it, not given to nested tasks. */
    @Test
    void anInterruptForTheWaitingBodyNeverReachesATaskRunInsideTheWait() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            AtomicInteger nestedInterrupted = new AtomicInteger();
            CountDownLatch waiting = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<Boolean> outerSawInterrupt = new AtomicReference<>();
            TaskGraph in = TaskGraph.named("inner");
            in.group(
                    "n",
                    50,
                    (i, t) -> t.cpu(ctx -> {
                        waiting.countDown();
                        if (Thread.currentThread().isInterrupted()) {
                            nestedInterrupted.incrementAndGet();
                        }
                        release.await(10, TimeUnit.SECONDS);
                        return i;
                    }));
            TaskGraph outer = TaskGraph.named("outer");
            outer.task("parent").cpu(ctx -> {
                GraphRun r = s.submit(in);
                r.await();
                outerSawInterrupt.set(Thread.currentThread().isInterrupted());
                return 1;
            });
            GraphRun run = s.submit(outer);
            assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
            run.cancel();
            release.countDown();
            try {
                run.await(Duration.ofSeconds(20));
            } catch (GraphRunException expected) {
                // cancelled
            }
            assertThat(nestedInterrupted.get())
                    .as("nested tasks interrupted by the outer run's cancel")
                    .isZero();
            assertThat(outerSawInterrupt.get())
                    .as("the waiting body gets its interrupt back")
                    .isTrue();
        }
    }

    @Test
    void aRunStillFinishingAfterShutdownMayStillRunNestedGraphsWhileNewRunsAreRefused() throws Exception {
        Scheduler s = Scheduler.builder().threads(1).build();
        try {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Inner in = inner("inner", 3);
            TaskGraph outer = TaskGraph.named("outer");
            Task<Integer> parent = outer.task("parent").cpu(ctx -> {
                started.countDown();
                release.await(10, TimeUnit.SECONDS);
                return ctx.execute(in.graph()).result(in.sum());
            });
            GraphRun run = s.submit(outer);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            s.shutdown();
            assertThatThrownBy(() -> s.submit(in.graph()))
                    .isInstanceOf(java.util.concurrent.RejectedExecutionException.class);
            release.countDown();
            assertThat(run.await(Duration.ofSeconds(10)).result(parent)).isEqualTo(3 + 3);
            assertThat(s.awaitTermination(Duration.ofSeconds(10))).isTrue();
        } finally {
            s.shutdownNow();
        }
    }

    @Test
    void aGpuBodyMayNotWaitForANestedRun() throws Exception {
        FakeGpuBackend gpu = new FakeGpuBackend(1);
        try (Scheduler s = Scheduler.builder().threads(1).gpuBackend(gpu).build()) {
            Inner in = inner("inner", 1);
            TaskGraph outer = TaskGraph.named("outer");
            outer.task("gpu").gpu(ctx -> ((TaskContext) ctx).execute(in.graph()));
            assertThatThrownBy(() -> s.submit(outer).await(Duration.ofSeconds(10)))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("only a CPU body may run a graph and wait for it");
        }
    }

    @Test
    void theNestedRunsFailureReachesTheWaitingBody() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph in = TaskGraph.named("inner");
            in.task("boom").cpu(ctx -> {
                throw new IllegalArgumentException("inner boom");
            });
            TaskGraph outer = TaskGraph.named("outer");
            Task<Object> parent = outer.task("parent").cpu(ctx -> ctx.execute(in));
            GraphRun run = s.submit(outer);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
            assertThat(run.error(parent))
                    .get()
                    .isInstanceOf(GraphRunException.class)
                    .satisfies(e -> assertThat(e).hasRootCauseMessage("inner boom"));
        }
    }
}
