package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.support.NotableEventsOnly;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A CPU task with one dependency starts on the worker that ran that dependency, counting it and
 * starting in one step, whenever nobody listens for TASK_READY: chains and trees pass every result
 * along, and so do layered DAGs, where such tasks sit beside joins of up to three dependencies;
 * cancels at random moments end every task once and never let a task run past a cancelled
 * dependency; a body started that way still receives its cancellation's interrupt; and a listener
 * for routine events still sees every TASK_READY.
 */
class ContinuationStartTests {

    private static TaskGraph chain(int n, List<Task<Integer>> out) {
        TaskGraph g = TaskGraph.named("chain");
        Task<Integer> previous = g.task("t0").cpu(ctx -> 1);
        out.add(previous);
        for (int i = 1; i < n; i++) {
            Task<Integer> before = previous;
            previous = g.task("t" + i).after(before).cpu(ctx -> ctx.input(before) + 1);
            out.add(previous);
        }
        return g;
    }

    @Test
    void aChainAndATreePassEveryResultAlong() {
        try (Scheduler s =
                Scheduler.builder().threads(2).listener(new NotableEventsOnly()).build()) {
            List<Task<Integer>> tasks = new ArrayList<>();
            TaskGraph g = chain(20_000, tasks);
            for (int round = 0; round < 5; round++) {
                assertThat(s.execute(g).result(tasks.get(tasks.size() - 1))).isEqualTo(20_000);
            }
            TaskGraph tree = TaskGraph.named("tree");
            List<Task<Long>> nodes = new ArrayList<>();
            nodes.add(tree.task("n0").cpu(ctx -> 1L));
            for (int i = 1; i < (1 << 14) - 1; i++) {
                Task<Long> parent = nodes.get((i - 1) / 2);
                nodes.add(tree.task("n" + i).after(parent).cpu(ctx -> 2 * ctx.input(parent)));
            }
            GraphRun run = s.execute(tree);
            for (int i = 0; i < nodes.size(); i++) {
                int depth = 31 - Integer.numberOfLeadingZeros(i + 1);
                assertThat(run.result(nodes.get(i))).isEqualTo(1L << depth);
            }
        }
    }

    @Test
    void runAndTaskCancelsAtRandomMomentsEndEveryChainTaskOnceAndInOrder() throws Exception {
        ExecutorService cancellers = Executors.newSingleThreadExecutor();
        SplittableRandom random = new SplittableRandom(42);
        try (Scheduler s =
                Scheduler.builder().threads(2).listener(new NotableEventsOnly()).build()) {
            List<Task<Integer>> tasks = new ArrayList<>();
            TaskGraph g = chain(3_000, tasks);
            for (int round = 0; round < 200; round++) {
                GraphRun run = s.submit(g);
                int spins = random.nextInt(20_000);
                boolean wholeRun = random.nextBoolean();
                Task<Integer> target = tasks.get(random.nextInt(tasks.size()));
                RandomCancel.cancelAndAwait(run, cancellers, spins, wholeRun ? run::cancel : () -> run.cancel(target));
                Map<String, TaskState> states = run.states();
                boolean cancelledSeen = false;
                for (int i = 0; i < tasks.size(); i++) {
                    TaskState st = states.get("t" + i);
                    if (cancelledSeen) {
                        assertThat(st)
                                .as("t%d after a cancelled task, round %d", i, round)
                                .isEqualTo(TaskState.CANCELLED);
                    } else if (st == TaskState.SUCCEEDED) {
                        assertThat(run.result(tasks.get(i))).isEqualTo(i + 1);
                    } else {
                        assertThat(st).as("t%d, round %d", i, round).isEqualTo(TaskState.CANCELLED);
                        cancelledSeen = true;
                    }
                }
            }
        } finally {
            cancellers.shutdownNow();
        }
    }

    @Test
    void aBodyStartedAsItsDependencysContinuationReceivesItsCancellationsInterrupt() throws Exception {
        try (Scheduler s =
                Scheduler.builder().threads(1).listener(new NotableEventsOnly()).build()) {
            for (int round = 0; round < 20; round++) {
                CountDownLatch entered = new CountDownLatch(1);
                AtomicBoolean interrupted = new AtomicBoolean();
                TaskGraph g = TaskGraph.named("blocking");
                Task<Integer> first = g.task("first").cpu(ctx -> 1);
                Task<Integer> waiter = g.task("waiter").after(first).cpu(ctx -> {
                    entered.countDown();
                    try {
                        new CountDownLatch(1).await(30, TimeUnit.SECONDS); // ends only by the interrupt
                    } catch (InterruptedException ex) {
                        interrupted.set(true);
                        throw ex;
                    }
                    return 2;
                });
                GraphRun run = s.submit(g);
                assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
                if (round % 2 == 0) {
                    run.cancel();
                } else {
                    run.cancel(waiter);
                }
                assertThatThrownBy(() -> run.await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
                assertThat(interrupted).as("round %d", round).isTrue();
                assertThat(run.states())
                        .containsEntry("first", TaskState.SUCCEEDED)
                        .containsEntry("waiter", TaskState.CANCELLED);
            }
        }
    }

    @Test
    void aListenerForRoutineEventsStillSeesEveryTaskReady() {
        AtomicInteger ready = new AtomicInteger();
        TaskListener all = e -> {
            if (e.type() == EventType.TASK_READY) {
                ready.incrementAndGet();
            }
        };
        try (Scheduler s = Scheduler.builder().threads(2).listener(all).build()) {
            List<Task<Integer>> tasks = new ArrayList<>();
            assertThat(s.execute(chain(1_000, tasks)).result(tasks.get(999))).isEqualTo(1_000);
            assertThat(ready).hasValue(1_000);
        }
    }

    /** A layered DAG: {@code layers} x {@code width} tasks, each after up to three tasks of the layer before. */
    private record Layered(TaskGraph graph, List<Task<Long>> tasks, List<int[]> parents, long[] expected) {

        static Layered of(int layers, int width, long seed) {
            SplittableRandom random = new SplittableRandom(seed);
            TaskGraph g = TaskGraph.named("layered");
            List<Task<Long>> tasks = new ArrayList<>();
            List<int[]> parents = new ArrayList<>();
            long[] expected = new long[layers * width];
            for (int layer = 0; layer < layers; layer++) {
                for (int k = 0; k < width; k++) {
                    int index = layer * width + k;
                    int[] ps = layer == 0
                            ? new int[0]
                            : random.ints(1 + random.nextInt(3), (layer - 1) * width, layer * width)
                                    .distinct()
                                    .toArray();
                    List<Task<Long>> upstream = new ArrayList<>();
                    long value = index;
                    for (int p : ps) {
                        upstream.add(tasks.get(p));
                        value = (value * 31 + expected[p]) % 1_000_003;
                    }
                    expected[index] = value;
                    tasks.add(g.task("n" + index).after(upstream).cpu(ctx -> {
                        long v = index;
                        for (Task<Long> u : upstream) {
                            v = (v * 31 + ctx.input(u)) % 1_000_003;
                        }
                        return v;
                    }));
                    parents.add(ps);
                }
            }
            return new Layered(g, tasks, parents, expected);
        }
    }

    @ParameterizedTest(name = "a listener of routine events: {0}")
    @ValueSource(booleans = {false, true})
    void aLayeredDagPassesEveryInputAlongWithAndWithoutRoutineListeners(boolean routineListener) {
        Layered dag = Layered.of(60, 24, 11);
        AtomicInteger ready = new AtomicInteger();
        TaskListener routine = event -> {
            if (event.type() == EventType.TASK_READY) {
                ready.incrementAndGet();
            }
        };
        TaskListener listener = routineListener ? routine : new NotableEventsOnly();
        try (Scheduler s = Scheduler.builder().threads(3).listener(listener).build()) {
            for (int round = 0; round < 5; round++) {
                GraphRun run = s.execute(dag.graph());
                for (int i = 0; i < dag.tasks().size(); i++) {
                    assertThat(run.result(dag.tasks().get(i)))
                            .as("n%d, round %d", i, round)
                            .isEqualTo(dag.expected()[i]);
                }
            }
        }
        if (routineListener) {
            assertThat(ready.get())
                    .isEqualTo(5 * dag.tasks().size()); // the listener that wants TASK_READY saw every one
        }
    }

    @Test
    void cancelsAtRandomMomentsNeverLetATaskOfALayeredDagRunPastACancelledDependency() throws Exception {
        Layered dag = Layered.of(40, 12, 5);
        ExecutorService cancellers = Executors.newSingleThreadExecutor();
        SplittableRandom random = new SplittableRandom(99);
        try (Scheduler s =
                Scheduler.builder().threads(2).listener(new NotableEventsOnly()).build()) {
            for (int round = 0; round < 200; round++) {
                GraphRun run = s.submit(dag.graph());
                boolean wholeRun = random.nextBoolean();
                Task<Long> target = dag.tasks().get(random.nextInt(dag.tasks().size()));
                RandomCancel.cancelAndAwait(
                        run, cancellers, random.nextInt(20_000), wholeRun ? run::cancel : () -> run.cancel(target));
                for (int i = 0; i < dag.tasks().size(); i++) {
                    TaskState st = run.state(dag.tasks().get(i));
                    if (st == TaskState.SUCCEEDED) {
                        assertThat(run.result(dag.tasks().get(i))).isEqualTo(dag.expected()[i]);
                        for (int p : dag.parents().get(i)) {
                            assertThat(run.state(dag.tasks().get(p)))
                                    .as("parent n%d of succeeded n%d, round %d", p, i, round)
                                    .isEqualTo(TaskState.SUCCEEDED);
                        }
                    } else {
                        assertThat(st).as("n%d, round %d", i, round).isEqualTo(TaskState.CANCELLED);
                    }
                }
            }
        } finally {
            cancellers.shutdownNow();
        }
    }
}
