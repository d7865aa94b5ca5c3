package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a run promises its caller on the paths a user meets less often: {@code future()} and
 * {@code whenDone} complete exceptionally with the failure or the cancel; {@code result} refuses a
 * task that did not succeed and another graph's task, naming it; the builder refuses bad values
 * naming what it accepts; a device backend that reports an attempt twice changes nothing.
 */
class RunApiContractTests {

    private static final Duration MAX = Duration.ofSeconds(10);

    @Test
    void futureCompletesWithTheRunOrExceptionallyWithTheFailureOrTheCancel() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph ok = TaskGraph.named("ok");
            ok.task("a").cpu(ctx -> 1);
            GraphRun done = s.submit(ok);
            assertThat(done.future().get(10, TimeUnit.SECONDS)).isSameAs(done);

            TaskGraph failing = TaskGraph.named("failing");
            failing.task("bad").cpu(ctx -> {
                throw new IllegalStateException("bad input");
            });
            GraphRun failed = s.submit(failing);
            assertThat(failed.future())
                    .failsWithin(MAX)
                    .withThrowableOfType(ExecutionException.class)
                    .havingCause()
                    .isInstanceOf(GraphRunException.class)
                    .satisfies(
                            ex -> assertThat(((GraphRunException) ex).status()).isEqualTo(RunStatus.FAILED))
                    .havingRootCause()
                    .isInstanceOf(IllegalStateException.class)
                    .withMessage("bad input");

            CountDownLatch held = new CountDownLatch(1);
            TaskGraph blocking = TaskGraph.named("blocking");
            blocking.task("held").cpu(ctx -> {
                held.await(10, TimeUnit.SECONDS);
                return 1;
            });
            GraphRun cancelled = s.submit(blocking);
            cancelled.cancel();
            held.countDown();
            assertThat(cancelled.future())
                    .failsWithin(MAX)
                    .withThrowableOfType(ExecutionException.class)
                    .havingCause()
                    .isInstanceOf(GraphRunException.class)
                    .satisfies(
                            ex -> assertThat(((GraphRunException) ex).status()).isEqualTo(RunStatus.CANCELLED));
        }
    }

    @Test
    void whenDoneFailsWithTheTasksErrorAndADescendantsWithItsCancel() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("when-done");
            Task<Integer> bad = g.task("bad").cpu(ctx -> {
                throw new IllegalArgumentException("no such shard");
            });
            Task<Integer> after = g.task("after").after(bad).cpu(ctx -> ctx.input(bad) + 1);
            TaskGroup<Integer> members = g.group(
                    "m",
                    3,
                    (i, t) -> t.cpu(ctx -> {
                        if (i == 1) {
                            throw new IllegalStateException("member 1");
                        }
                        return i;
                    }));
            Task<Integer> fine = g.task("fine").cpu(ctx -> 7);
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThat(run.whenDone(bad))
                    .failsWithin(MAX)
                    .withThrowableThat()
                    .havingRootCause()
                    .isInstanceOf(IllegalArgumentException.class)
                    .withMessage("no such shard");
            assertThat(run.whenDone(after))
                    .failsWithin(MAX)
                    .withThrowableThat()
                    .havingCause()
                    .isInstanceOf(TaskCancelledException.class);
            assertThat(run.whenDone(members))
                    .failsWithin(MAX)
                    .withThrowableThat()
                    .havingRootCause()
                    .withMessage("member 1");
            assertThat(run.whenDone(fine)).succeedsWithin(MAX).isEqualTo(7);
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            assertThat(run.state(after)).isEqualTo(TaskState.CANCELLED);
        }
    }

    @Test
    void resultRefusesATaskThatDidNotSucceedAndAnotherGraphsTaskNamingThem() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("mine");
            Task<Integer> bad = g.task("bad").cpu(ctx -> {
                throw new IllegalStateException("broken");
            });
            Task<Integer> fine = g.task("fine").cpu(ctx -> 1);
            TaskGraph other = TaskGraph.named("theirs");
            Task<Integer> foreign = other.task("fine").cpu(ctx -> 2);
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            assertThat(run.result(fine)).isEqualTo(1);
            assertThatIllegalStateException()
                    .isThrownBy(() -> run.result(bad))
                    .withMessageContaining("task 'bad'")
                    .withMessageContaining("has no result: it is FAILED")
                    .withMessageContaining("broken");
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> run.result(foreign))
                    .withMessageContaining("graph 'theirs'")
                    .withMessageContaining("this run's graph 'mine'");
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> run.state(foreign))
                    .withMessageContaining("'theirs'");
        }
    }

    @Test
    void theBuilderRefusesBadValuesSayingWhatItAccepts() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().threads(0))
                .withMessageContaining("threads")
                .withMessageContaining("was 0");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().retainedRuns(-1))
                .withMessage("retained runs must be 0 or more, was -1");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().retainedProfileBytes(-1))
                .withMessage("retained profile bytes must be 0 or more, was -1");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().eventBufferSize(-5))
                .withMessage("event buffer size must be 0 or more, was -5");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().failedRunsLoggedPerMinute(-1))
                .withMessageContaining("must be 0 (none) or more, was -1");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().stallTimeout(Duration.ofMillis(1)))
                .withMessageContaining("at least 10 ms");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().resource(" ", 1))
                .withMessageContaining("a name that is not blank");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().resource("io", -1))
                .withMessageContaining("capacity of resource 'io' must be 0 or more, was -1");
    }
}
