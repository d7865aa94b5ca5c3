package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.RunResults;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.support.Blocking;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Cancellation reaches a body however close to its start it lands. */
class CancellationTests {

    /**
     * The cancel lands after the task became RUNNING and before its body began: a listener of its
     * start cancels the task, or the whole run, on the task's own thread. The body begins
     * interrupted (the interrupt is the engine's, although a listener was running when it came),
     * so a sleeping body ends at once.
     */
    @ParameterizedTest(name = "cancel the {0}")
    @ValueSource(strings = {"task", "run"})
    void aTaskCancelledAsItStartsBeginsItsBodyInterrupted(String what) throws Exception {
        AtomicBoolean interruptedAtStart = new AtomicBoolean();
        CountDownLatch gate = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("g");
        Task<Boolean> first = g.task("first").cpu(ctx -> gate.await(10, TimeUnit.SECONDS));
        Task<String> sleeper = g.task("sleeper").after(first).cpu(ctx -> {
            interruptedAtStart.set(Thread.currentThread().isInterrupted());
            Blocking.untilInterrupted(Duration.ofSeconds(30)); // bounded: a regression fails the await, then closes
            return "slept";
        });
        AtomicReference<GraphRun> run = new AtomicReference<>();
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .listener(e -> {
                    if (e.type() == EventType.TASK_STARTED && "sleeper".equals(e.taskName())) {
                        if (what.equals("task")) {
                            run.get().cancel(sleeper);
                        } else {
                            run.get().cancel();
                        }
                    }
                })
                .build()) {
            run.set(s.submit(g));
            gate.countDown();
            assertThatThrownBy(() -> run.get().await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
            assertThat(interruptedAtStart).isTrue();
            assertThat(run.get().state(sleeper)).isEqualTo(TaskState.CANCELLED);
            assertThat(run.get().error(sleeper)).get().isInstanceOf(TaskCancelledException.class);
            assertThat(run.get().status()).isEqualTo(RunStatus.CANCELLED);
        }
    }

    /**
     * A listener that interrupts its own thread, at any event of a task, fails no body: the flag it
     * set is not the engine's, and the next body on that worker begins without it.
     */
    @Test
    void anInterruptSetByAListenerReachesNoBody() throws Exception {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> a = g.task("a").cpu(ctx -> {
            Blocking.interruptibleCall();
            return 1;
        });
        Task<Integer> b = g.task("b").after(a).cpu(ctx -> {
            Blocking.interruptibleCall();
            return ctx.input(a) + 1;
        });
        g.task("c").after(b).cpu(ctx -> {
            Blocking.interruptibleCall();
            return ctx.input(b) + 1;
        });
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .listener(e -> Thread.currentThread().interrupt())
                .build()) {
            for (int k = 0; k < 20; k++) {
                assertThat(s.execute(g).status()).isEqualTo(RunStatus.SUCCEEDED);
            }
        }
    }

    /**
     * A body that carries an interrupt flag of its own (it interrupted itself) and then waits for a
     * nested run on a single worker: the tasks the worker runs meanwhile never see the flag, and
     * the body has it back when the wait is over.
     */
    @Test
    void aBodysOwnInterruptIsKeptForItAcrossANestedWait() throws Exception {
        TaskGraph inner = TaskGraph.named("inner");
        TaskGroup<Boolean> probes = inner.group(
                "probe", 4, (i, t) -> t.cpu(ctx -> Thread.currentThread().isInterrupted()));
        TaskGraph outer = TaskGraph.named("outer");
        Task<Boolean> waiter = outer.task("waiter").cpu(ctx -> {
            Thread.currentThread().interrupt();
            RunResults nested = ctx.execute(inner);
            boolean anyInnerSawIt = nested.results(probes).contains(true);
            boolean mine = Thread.interrupted();
            return !anyInnerSawIt && mine;
        });
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            GraphRun run = s.execute(outer);
            assertThat(run.result(waiter))
                    .as("no inner task saw the flag, and the waiter had it back")
                    .isTrue();
        }
    }
}
