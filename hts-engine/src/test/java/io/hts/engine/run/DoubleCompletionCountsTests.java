package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.observe.TaskStatistics;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/**
 * A device backend that reports an attempt twice (two completions at once from two threads, or a
 * completion then a failure) changes neither the task's outcome nor anything the scheduler counts:
 * one terminal event a task, one {@code onRunFinished} a run, the profiler's count per task, the
 * run's pending count, and the successors see the one result that won.
 */
class DoubleCompletionCountsTests {

    private static final Duration MAX = Duration.ofSeconds(10);

    /** A backend that starts each GPU attempt, then makes the given reports (by hand: what they throw is kept). */
    private static ScriptedBackend reportingBackend(BiConsumer<ScriptedBackend, DeviceTask> reports) {
        return new ScriptedBackend(2, (be, task) -> {
            if (task.start(0)) {
                reports.accept(be, task);
            }
        });
    }

    /** Counts terminal events per run and task, and finished runs. */
    private static final class Counting implements TaskListener {
        final ConcurrentLinkedQueue<TaskEvent> terminal = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Long> finishedRuns = new ConcurrentLinkedQueue<>();

        @Override
        public void onEvent(TaskEvent event) {
            if (event.taskName() != null
                    && (event.type() == EventType.TASK_SUCCEEDED
                            || event.type() == EventType.TASK_FAILED
                            || event.type() == EventType.TASK_CANCELLED)) {
                terminal.add(event);
            }
        }

        @Override
        public void onRunFinished(RunProfile profile) {
            finishedRuns.add(profile.runId());
        }

        long terminalOf(long run, String task) {
            return terminal.stream()
                    .filter(e -> e.runId() == run && task.equals(e.taskName()))
                    .count();
        }
    }

    @Test
    void twoCompletionsAtOnceFromTwoThreadsEndTheTaskOnceAndCountItOnce() throws Exception {
        int rounds = 40;
        ScriptedBackend backend = reportingBackend((be, task) -> {
            CyclicBarrier both = new CyclicBarrier(2);
            CountDownLatch second = new CountDownLatch(1);
            Thread other = new Thread(
                    () -> {
                        be.reporting(() -> {
                            awaitQuietly(both);
                            task.complete("from-other");
                        });
                        second.countDown();
                    },
                    "double-report-2");
            other.setDaemon(true);
            other.start();
            be.reporting(() -> {
                awaitQuietly(both);
                task.complete("from-starter");
            });
            try {
                second.await();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        Counting counting = new Counting();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(backend)
                .listener(counting)
                .retainedRuns(50)
                .build()) {
            TaskGraph g = TaskGraph.named("racing-reports");
            Task<String> kernel = g.task("kernel").gpu(ctx -> "unused");
            Task<String> next = g.task("next").after(kernel).cpu(ctx -> ctx.input(kernel) + "+next");
            for (int round = 0; round < rounds; round++) {
                GraphRun run = s.submit(g);
                assertThat(run.await(MAX).status()).isEqualTo(RunStatus.SUCCEEDED);
                String won = run.result(kernel);
                assertThat(won).isIn("from-starter", "from-other");
                assertThat(run.result(next))
                        .as("the successor read the result that won")
                        .isEqualTo(won + "+next");
                assertThat(run.whenDone(kernel)).isCompletedWithValue(won);
                assertThat(run.pendingTasks()).isZero();
                assertThat(run.failures()).isEmpty();
                assertThat(run.profile().tasks())
                        .allSatisfy(t -> assertThat(t.attempts()).isOne());
                assertThat(counting.terminalOf(run.runId(), "kernel")).isOne();
                assertThat(counting.terminalOf(run.runId(), "next")).isOne();
            }
            Map<String, TaskStatistics> stats = s.profiler().taskStatistics().get("racing-reports");
            assertThat(stats.get("kernel").count())
                    .as("each run counted once in the statistics")
                    .isEqualTo(rounds);
            assertThat(counting.finishedRuns).hasSize(rounds).doesNotHaveDuplicates();
            assertThat(counting.terminal).extracting(TaskEvent::type).containsOnly(EventType.TASK_SUCCEEDED);
        }
        assertThat(backend.reportErrors)
                .as("a second report is ignored, not thrown at the backend")
                .isEmpty();
    }

    @Test
    void aFailureReportedAfterTheCompletionChangesNeitherTheOutcomeNorTheCounts() throws Exception {
        AtomicInteger dispatched = new AtomicInteger();
        ScriptedBackend backend = reportingBackend((be, task) -> {
            dispatched.incrementAndGet();
            be.complete(task, 7);
            be.fail(task, new IllegalStateException("late device error"));
            be.reporting(() -> task.failDeviceLost(new IllegalStateException("late lost device")));
            be.complete(task, 8);
        });
        Counting counting = new Counting();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(backend)
                .listener(counting)
                .retainedRuns(50)
                .build()) {
            TaskGraph g = TaskGraph.named("late-failure");
            // A retry would show a second attempt if the late failure were taken for the attempt's end.
            Task<Integer> kernel = g.task("kernel").retries(2, Duration.ZERO).gpu(ctx -> 0);
            Task<Integer> next = g.task("next").after(kernel).cpu(ctx -> ctx.input(kernel) * 10);
            for (int round = 0; round < 20; round++) {
                GraphRun run = s.submit(g);
                assertThat(run.await(MAX).status()).isEqualTo(RunStatus.SUCCEEDED);
                assertThat(run.result(kernel)).isEqualTo(7);
                assertThat(run.result(next)).isEqualTo(70);
                assertThat(run.state(kernel)).isEqualTo(TaskState.SUCCEEDED);
                assertThat(run.error(kernel)).isEmpty();
                assertThat(run.profile().tasks())
                        .allSatisfy(t -> assertThat(t.attempts()).isOne());
                assertThat(counting.terminalOf(run.runId(), "kernel")).isOne();
            }
            assertThat(dispatched)
                    .as("one dispatch a run: the late failure started no retry")
                    .hasValue(20);
            assertThat(s.profiler()
                            .taskStatistics()
                            .get("late-failure")
                            .get("kernel")
                            .count())
                    .isEqualTo(20);
            assertThat(counting.finishedRuns).hasSize(20);
            assertThat(counting.terminal).extracting(TaskEvent::type).containsOnly(EventType.TASK_SUCCEEDED);
        }
        assertThat(backend.reportErrors).isEmpty();
    }

    private static void awaitQuietly(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }
}
