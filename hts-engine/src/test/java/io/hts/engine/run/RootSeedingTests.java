package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A graph of many roots (more than the caller makes ready itself) is seeded over the workers in
 * ranges: every root runs exactly once whatever the count (around the seeders' leaf size and far
 * beyond), its successor sees every result, and cancels at random moments during the seeding end
 * every root once, a body never running for a task that ends CANCELLED before it started.
 */
class RootSeedingTests {

    private static TaskGraph roots(int n, AtomicIntegerArray ran, List<Task<Integer>> out) {
        TaskGraph g = TaskGraph.named("roots-" + n);
        for (int i = 0; i < n; i++) {
            int index = i;
            out.add(g.task("r" + i).cpu(ctx -> {
                ran.incrementAndGet(index);
                return index;
            }));
        }
        return g;
    }

    @ParameterizedTest(name = "{0} roots on {1} workers")
    @CsvSource({"65, 1", "66, 2", "72, 2", "73, 3", "129, 2", "1000, 1", "10007, 2", "100000, 4"})
    void everyRootRunsExactlyOnceAndASinkSeesEveryResult(int n, int workers) throws Exception {
        AtomicIntegerArray ran = new AtomicIntegerArray(n);
        List<Task<Integer>> tasks = new ArrayList<>();
        TaskGraph g = roots(n, ran, tasks);
        Task<Long> sum = g.task("sum").after(tasks).cpu(ctx -> {
            long s = 0;
            for (Task<Integer> t : tasks) {
                s += ctx.input(t);
            }
            return s;
        });
        try (Scheduler s = Scheduler.builder().threads(workers).build()) {
            for (int round = 1; round <= 3; round++) {
                GraphRun run = s.submit(g);
                try {
                    run.await(Duration.ofSeconds(30));
                } catch (TimeoutException ex) {
                    int pending = run.pendingTasks();
                    run.cancel(); // a root never made ready: the run cannot end otherwise
                    throw new AssertionError("round " + round + " did not end; tasks pending: " + pending, ex);
                }
                assertThat(run.result(sum)).isEqualTo((long) n * (n - 1) / 2);
                for (int i = 0; i < n; i++) {
                    assertThat(ran.get(i)).as("root %d, round %d", i, round).isEqualTo(round);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} workers")
    @CsvSource({"1", "2", "4"})
    void cancelsDuringTheSeedingEndEveryRootOnce(int workers) throws Exception {
        int n = 20_000;
        ExecutorService cancellers = Executors.newSingleThreadExecutor();
        SplittableRandom random = new SplittableRandom(7 + workers);
        try (Scheduler s = Scheduler.builder().threads(workers).build()) {
            for (int round = 0; round < 60; round++) {
                AtomicIntegerArray ran = new AtomicIntegerArray(n);
                List<Task<Integer>> tasks = new ArrayList<>();
                TaskGraph g = roots(n, ran, tasks);
                GraphRun run = s.submit(g);
                int spins = random.nextInt(200_000);
                boolean wholeRun = random.nextInt(4) != 0;
                Task<Integer> target = tasks.get(random.nextInt(n));
                RandomCancel.cancelAndAwait(run, cancellers, spins, wholeRun ? run::cancel : () -> run.cancel(target));
                Map<String, TaskState> states = run.states();
                for (int i = 0; i < n; i++) {
                    TaskState st = states.get("r" + i);
                    assertThat(ran.get(i))
                            .as("root %d ran at most once, round %d", i, round)
                            .isLessThanOrEqualTo(1);
                    if (st == TaskState.SUCCEEDED) {
                        assertThat(ran.get(i))
                                .as("succeeded root %d ran, round %d", i, round)
                                .isEqualTo(1);
                        assertThat(run.result(tasks.get(i))).isEqualTo(i);
                    } else {
                        assertThat(st).as("root %d, round %d", i, round).isEqualTo(TaskState.CANCELLED);
                    }
                }
                if (!wholeRun && run.state(target) == TaskState.SUCCEEDED) {
                    assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED); // the cancel came too late
                }
            }
        } finally {
            cancellers.shutdownNow();
        }
    }
}
