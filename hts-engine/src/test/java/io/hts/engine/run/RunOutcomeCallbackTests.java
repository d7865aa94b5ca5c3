package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What a caller composing on a run sees when the run does not succeed: {@code future()} fails with a
 * {@link GraphRunException} that carries every failure and the cancelled tasks; {@code whenDone}
 * callbacks run once, after the task's state is final, whether they were registered before the end
 * or after it; and every per-task method refuses a task of another graph (even one whose graph has
 * the same name) instead of reading or cancelling a task of this run by its index.
 */
class RunOutcomeCallbackTests {

    private static final Duration MAX = Duration.ofSeconds(10);

    private static Throwable unwrap(Throwable ex) {
        return ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex;
    }

    /** A stage's outcome: how often it ran, what it got, and the task's state as it ran. */
    private static final class Seen<T> {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicReference<T> value = new AtomicReference<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final AtomicReference<TaskState> stateThen = new AtomicReference<>();
        final CountDownLatch done = new CountDownLatch(1);

        Seen<T> on(CompletableFuture<T> f, GraphRun run, Task<?> task) {
            f.whenComplete((v, ex) -> {
                calls.incrementAndGet();
                value.set(v);
                error.set(ex == null ? null : unwrap(ex));
                stateThen.set(task == null ? null : run.state(task));
                done.countDown();
            });
            return this;
        }

        Seen<T> awaited() throws InterruptedException {
            assertThat(done.await(10, TimeUnit.SECONDS)).as("the stage ran").isTrue();
            return this;
        }
    }

    @Test
    void theFuturesExceptionOfAFailedRunCarriesEveryFailureAndTheCancelledTasks() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("two-failures");
            Task<Integer> left = g.task("left").cpu(ctx -> {
                throw new IllegalStateException("left broke");
            });
            Task<Integer> right = g.task("right").cpu(ctx -> {
                throw new IllegalArgumentException("right broke");
            });
            g.task("child").after(left).cpu(ctx -> ctx.input(left) + 1);
            Task<Integer> fine = g.task("fine").cpu(ctx -> 5);
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));

            ExecutionException wrapped = catchThrowableOfType(
                    ExecutionException.class, () -> run.future().get(10, TimeUnit.SECONDS));
            assertThat(wrapped).isNotNull();
            assertThat(wrapped.getCause()).isInstanceOf(GraphRunException.class);
            GraphRunException ex = (GraphRunException) wrapped.getCause();
            assertThat(ex.status()).isEqualTo(RunStatus.FAILED);
            assertThat(ex.runId()).isEqualTo(run.runId());
            assertThat(ex.graphName()).isEqualTo("two-failures");
            assertThat(ex.failures()).extracting(TaskFailure::taskName).containsExactlyInAnyOrder("left", "right");
            assertThat(ex.failures())
                    .extracting(f -> f.error().getMessage())
                    .containsExactlyInAnyOrder("left broke", "right broke");
            assertThat(ex.getCause())
                    .as("the cause is the first failure")
                    .isSameAs(ex.failures().get(0).error());
            assertThat(ex.getSuppressed())
                    .as("the other failures are suppressed")
                    .containsExactly(ex.failures().get(1).error());
            assertThat(ex.cancelled()).containsExactly("child");
            assertThat(ex.getMessage())
                    .contains("run " + run.runId() + " of graph 'two-failures' failed: 2 tasks failed")
                    .contains("left")
                    .contains("right")
                    .contains("1 task cancelled");
            // The same failures as the run itself reports, and as await() throws.
            assertThat(ex.failures())
                    .extracting(TaskFailure::taskName)
                    .containsExactlyElementsOf(
                            run.failures().stream().map(TaskFailure::taskName).toList());
            assertThatThrownBy(run::await)
                    .isInstanceOfSatisfying(
                            GraphRunException.class,
                            awaited -> assertThat(awaited.failures())
                                    .extracting(TaskFailure::taskName)
                                    .containsExactlyElementsOf(ex.failures().stream()
                                            .map(TaskFailure::taskName)
                                            .toList()));
            assertThat(run.result(fine)).isEqualTo(5);
            assertThat(run.state(right)).isEqualTo(TaskState.FAILED);
        }
    }

    @Test
    void theFuturesExceptionOfACancelledRunHasNoFailureAndNamesTheCancelledTasks() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("to-cancel");
            Task<Integer> held = g.task("held").cpu(ctx -> {
                started.countDown();
                release.await(10, TimeUnit.SECONDS);
                return 1;
            });
            g.task("next").after(held).cpu(ctx -> ctx.input(held) + 1);
            g.task("last").after("next").cpu(ctx -> 3);
            GraphRun run = s.submit(g);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            Seen<GraphRun> before = new Seen<GraphRun>().on(run.future(), run, null);
            assertThat(run.cancel()).isTrue();
            release.countDown();

            ExecutionException wrapped = catchThrowableOfType(
                    ExecutionException.class, () -> run.future().get(10, TimeUnit.SECONDS));
            assertThat(wrapped.getCause()).isInstanceOf(GraphRunException.class);
            GraphRunException ex = (GraphRunException) wrapped.getCause();
            assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(ex.failures()).isEmpty();
            assertThat(ex.getCause()).isNull();
            assertThat(ex.cancelled()).contains("next", "last");
            assertThat(ex.getMessage())
                    .startsWith("run " + run.runId() + " of graph 'to-cancel' was cancelled")
                    .contains(ex.cancelled().size() + " task");
            assertThat(before.awaited().calls).hasValue(1);
            assertThat(before.error.get()).isInstanceOf(GraphRunException.class);

            // Registered after the end: runs at once, once, with the same kind of outcome.
            Seen<GraphRun> after = new Seen<GraphRun>().on(run.future(), run, null);
            assertThat(after.done.getCount())
                    .as("a stage added after the end runs as it is added")
                    .isZero();
            assertThat(after.calls).hasValue(1);
            assertThat(after.error.get())
                    .isInstanceOfSatisfying(
                            GraphRunException.class, e -> assertThat(e.status()).isEqualTo(RunStatus.CANCELLED));
            assertThat(before.calls).as("no stage runs twice").hasValue(1);
        }
    }

    @Test
    void whenDoneStagesOfAFailedTaskAndItsDescendantRunOnceAfterTheirStatesAreFinal() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            CountDownLatch go = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("failing-callbacks");
            Task<Integer> bad = g.task("bad").cpu(ctx -> {
                go.await(10, TimeUnit.SECONDS);
                throw new IllegalStateException("bad row 7");
            });
            Task<Integer> child = g.task("child").after(bad).cpu(ctx -> ctx.input(bad) * 2);
            GraphRun run = s.submit(g);
            Seen<Integer> badSeen = new Seen<Integer>().on(run.whenDone(bad), run, bad);
            Seen<Integer> childSeen = new Seen<Integer>().on(run.whenDone(child), run, child);
            go.countDown();

            badSeen.awaited();
            childSeen.awaited();
            assertThat(badSeen.stateThen).hasValue(TaskState.FAILED);
            assertThat(badSeen.error.get())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("bad row 7");
            assertThat(badSeen.value.get()).isNull();
            assertThat(childSeen.stateThen).hasValue(TaskState.CANCELLED);
            assertThat(childSeen.error.get())
                    .isInstanceOf(TaskCancelledException.class)
                    .hasMessageContaining("task 'bad' failed")
                    .hasRootCauseMessage("bad row 7");
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);

            Seen<Integer> lateBad = new Seen<Integer>().on(run.whenDone(bad), run, bad);
            Seen<Integer> lateChild = new Seen<Integer>().on(run.whenDone(child), run, child);
            assertThat(lateBad.calls).hasValue(1);
            assertThat(lateBad.error.get()).isSameAs(badSeen.error.get());
            assertThat(lateChild.calls).hasValue(1);
            assertThat(lateChild.error.get()).isSameAs(childSeen.error.get());
            assertThat(badSeen.calls).hasValue(1);
            assertThat(childSeen.calls).hasValue(1);
        }
    }

    @Test
    void whenDoneStagesOfACancelledRunSeeTheCancelOnceAndASucceededTaskKeepsItsResult() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("cancel-callbacks");
            Task<Integer> first = g.task("first").cpu(ctx -> 10);
            Task<Integer> held = g.task("held").after(first).cpu(ctx -> {
                started.countDown();
                release.await(10, TimeUnit.SECONDS);
                return ctx.input(first);
            });
            Task<Integer> queued = g.task("queued").after(held).cpu(ctx -> ctx.input(held) + 1);
            TaskGroup<Integer> members = g.group("m", 3, (i, t) -> t.after(held).cpu(ctx -> i));
            GraphRun run = s.submit(g);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            Seen<Integer> queuedSeen = new Seen<Integer>().on(run.whenDone(queued), run, queued);
            Seen<List<Integer>> groupSeen = new Seen<List<Integer>>().on(run.whenDone(members), run, null);
            Seen<Integer> firstSeen = new Seen<Integer>().on(run.whenDone(first), run, first);

            assertThat(run.cancel()).isTrue();
            queuedSeen.awaited();
            groupSeen.awaited();
            release.countDown();
            assertThatThrownBy(run::await)
                    .isInstanceOfSatisfying(
                            GraphRunException.class,
                            ex -> assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED));

            assertThat(queuedSeen.stateThen).hasValue(TaskState.CANCELLED);
            assertThat(queuedSeen.error.get())
                    .isInstanceOf(TaskCancelledException.class)
                    .hasMessage("run " + run.runId() + " of graph 'cancel-callbacks' was cancelled");
            assertThat(groupSeen.error.get())
                    .isInstanceOf(TaskCancelledException.class)
                    .hasMessageContaining("was cancelled");
            assertThat(firstSeen.awaited().error.get())
                    .as("a task that succeeded before the cancel")
                    .isNull();
            assertThat(firstSeen.value).hasValue(10);

            Seen<Integer> late = new Seen<Integer>().on(run.whenDone(queued), run, queued);
            Seen<List<Integer>> lateGroup = new Seen<List<Integer>>().on(run.whenDone(members), run, null);
            Seen<Integer> lateFirst = new Seen<Integer>().on(run.whenDone(first), run, first);
            assertThat(late.calls).hasValue(1);
            assertThat(late.error.get()).isSameAs(queuedSeen.error.get());
            assertThat(lateGroup.calls).hasValue(1);
            assertThat(lateGroup.error.get()).isInstanceOf(TaskCancelledException.class);
            assertThat(lateFirst.calls).hasValue(1);
            assertThat(lateFirst.value).hasValue(10);
            assertThat(queuedSeen.calls).hasValue(1);
            assertThat(groupSeen.calls).hasValue(1);
            assertThat(firstSeen.calls).hasValue(1);
        }
    }

    @Test
    void everyPerTaskMethodRefusesATaskOfAnotherGraphNamingItAndBothGraphs() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph mine = TaskGraph.named("mine");
            Task<Integer> a = mine.task("a").cpu(ctx -> {
                started.countDown();
                release.await(10, TimeUnit.SECONDS);
                return 1;
            });
            mine.group("m", 2, (i, t) -> t.after(a).cpu(ctx -> ctx.input(a) + i));
            TaskGraph theirs = TaskGraph.named("theirs");
            Task<Integer> foreign = theirs.task("a").cpu(ctx -> 99);
            TaskGroup<Integer> foreignGroup = theirs.group("m", 2, (i, t) -> t.cpu(ctx -> i));

            GraphRun run = s.submit(mine);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            List<Runnable> calls = List.of(
                    () -> run.result(foreign),
                    () -> run.error(foreign),
                    () -> run.cancel(foreign),
                    () -> run.whenDone(foreign),
                    () -> run.results(foreignGroup),
                    () -> run.cancel(foreignGroup),
                    () -> run.whenDone(foreignGroup));
            for (Runnable call : calls) {
                assertThatIllegalArgumentException()
                        .isThrownBy(call::run)
                        .withMessageMatching("task 'a' belongs to graph 'theirs', not to this run's graph 'mine'"
                                + "|task 'm\\[0\\]' belongs to graph 'theirs', not to this run's graph 'mine'");
            }
            release.countDown();
            // Refused, not applied to this run's task at the same index: nothing here was cancelled.
            assertThat(run.await().status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(run.result(a)).isEqualTo(1);
        }
    }

    @Test
    void aTaskOfAnotherGraphWithTheSameNamesIsStillRefused() {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph one = TaskGraph.named("same");
            one.task("t").cpu(ctx -> "one");
            TaskGraph two = TaskGraph.named("same");
            Task<String> twin = two.task("t").cpu(ctx -> "two");
            GraphRun run = s.execute(one);
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> run.result(twin))
                    .withMessage("task 't' belongs to graph 'same', not to this run's graph 'same'");
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> run.whenDone(twin))
                    .withMessageContaining("task 't'");
        }
    }
}
