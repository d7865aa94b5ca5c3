package io.hts.engine.graph;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A backend's richer context sees through to the engine's context of the same attempt. */
class ForwardingTaskContextTests {

    /** The least a backend adds: nothing. */
    private static final class Wrapped extends ForwardingTaskContext {

        Wrapped(TaskContext delegate) {
            super(delegate);
        }
    }

    @Test
    void aForwardingContextAnswersAsTheAttemptsOwnContext() {
        AtomicReference<String> seen = new AtomicReference<>();
        TaskGraph g = TaskGraph.named("forwarded");
        TaskGroup<Integer> parts = g.group("part", 2, (i, t) -> t.cpu(ctx -> new Wrapped(ctx).groupIndex() * 10));
        Task<Integer> sum = g.task("sum").after(parts).retries(1, Duration.ZERO).cpu(ctx -> {
            TaskContext c = new Wrapped(ctx);
            if (c.attempt() == 1) {
                throw new IllegalStateException("the first attempt fails");
            }
            seen.set(c.taskName() + " of " + c.graphName() + " run " + c.runId() + " attempt " + c.attempt()
                    + " group index " + c.groupIndex() + " on " + c.device() + " cancelled "
                    + c.isCancelled() + " first part " + c.input(parts.get(0)));
            List<Integer> all = c.inputs(parts);
            return all.get(0) + all.get(1);
        });
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.execute(g);
            assertThat(run.result(sum)).isEqualTo(10);
            assertThat(seen.get())
                    .isEqualTo("sum of forwarded run " + run.runId()
                            + " attempt 2 group index -1 on CPU cancelled false first part 0");
        }
    }

    @Test
    void aForwardingContextSeesTheCancel() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean sawCancel = new AtomicBoolean();
        TaskGraph g = TaskGraph.named("cancelled");
        g.task("spin").cpu(ctx -> {
            TaskContext c = new Wrapped(ctx);
            started.countDown();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!c.isCancelled() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            sawCancel.set(c.isCancelled());
            return 1;
        });
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            GraphRun run = s.submit(g);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            run.cancel();
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(run::isDone);
        }
        assertThat(sawCancel).isTrue();
    }
}
