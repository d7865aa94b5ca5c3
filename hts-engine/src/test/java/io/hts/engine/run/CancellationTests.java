package io.hts.engine.run;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Cancellation reaches a body however close to its start it lands. */
class CancellationTests {

    /**
     * The cancel lands after the task became RUNNING and before its body began (a listener of its
     * start cancels it): the body begins interrupted, so a sleeping body ends at once.
     */
    @Test
    void aTaskCancelledAsItStartsBeginsItsBodyInterrupted() throws Exception {
        AtomicBoolean interruptedAtStart = new AtomicBoolean();
        CountDownLatch gate = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("g");
        Task<Boolean> first = g.task("first").cpu(ctx -> gate.await(10, TimeUnit.SECONDS));
        Task<String> sleeper = g.task("sleeper").after(first).cpu(ctx -> {
            interruptedAtStart.set(Thread.currentThread().isInterrupted());
            Thread.sleep(Duration.ofMinutes(5).toMillis());
            return "slept";
        });
        AtomicReference<GraphRun> run = new AtomicReference<>();
        try (Scheduler s = Scheduler.builder().threads(1).listener(e -> {
            if (e.type() == EventType.TASK_STARTED && "sleeper".equals(e.task())) {
                run.get().cancel(sleeper);
            }
        }).build()) {
            run.set(s.submit(g));
            gate.countDown();
            assertThatThrownBy(() -> run.get().await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
            assertThat(interruptedAtStart).isTrue();
            assertThat(run.get().state(sleeper)).isEqualTo(TaskState.CANCELLED);
            assertThat(run.get().error(sleeper)).get().isInstanceOf(TaskCancelledException.class);
        }
    }
}
