package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class InterruptCloseBreakTests {

    static final Duration MAX = Duration.ofSeconds(20);

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(3));
    }

    /** An outer body that runs a nested graph then sleeps; a listener interrupts its own thread at one event of the nested run. */
    private void listenerInterruptAroundNestedWait(EventType at, int threads) throws Exception {
        AtomicBoolean armed = new AtomicBoolean(true);
        Scheduler s = Scheduler.builder()
                .threads(threads)
                .listener(ev -> {
                    if (ev.type() == at && ev.graphName().equals("inner") && armed.get()) {
                        Thread.currentThread().interrupt();
                    }
                })
                .build();
        try {
            TaskGraph inner = TaskGraph.named("inner");
            inner.task("i").cpu(ctx -> 7);
            TaskGraph outer = TaskGraph.named("outer");
            AtomicReference<String> seen = new AtomicReference<>("not run");
            Task<Integer> o = outer.task("o").cpu(ctx -> {
                ctx.execute(inner);
                boolean flagged = Thread.currentThread().isInterrupted();
                seen.set("flag after execute: " + flagged);
                Blocking.interruptibleCall(); // a body that blocks after its nested wait
                return 1;
            });
            GraphRun run = s.submit(outer);
            GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(10));
            Checks.assertConsistent(run);
            assertThat(ex)
                    .as(
                            "outer body failed after a listener at %s interrupted its thread (%s): %s",
                            at, seen.get(), ex == null ? "" : String.valueOf(ex.getCause()))
                    .isNull();
            assertThat(run.state(o)).isEqualTo(TaskState.SUCCEEDED);
        } finally {
            closeQuietly(s);
        }
    }

    @Test
    void aListenerInterruptingOnTheNestedRunsSubmissionFailsNoBody() {
        assertTimeoutPreemptively(MAX, () -> listenerInterruptAroundNestedWait(EventType.RUN_SUBMITTED, 1));
    }

    @Test
    void aListenerInterruptingOnANestedTaskSucceededFailsNoBody() {
        assertTimeoutPreemptively(MAX, () -> listenerInterruptAroundNestedWait(EventType.TASK_SUCCEEDED, 1));
    }

    @Test
    void aListenerInterruptingOnTheNestedRunsEndFailsNoBody() {
        assertTimeoutPreemptively(MAX, () -> listenerInterruptAroundNestedWait(EventType.RUN_SUCCEEDED, 1));
    }

    @Test
    void aListenerInterruptingOnATaskCancelledTheBodyCausedFailsNoBody() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(ev -> {
                        if (ev.type() == EventType.TASK_CANCELLED) {
                            Thread.currentThread().interrupt();
                        }
                    })
                    .build();
            try {
                TaskGraph g = TaskGraph.named("g");
                CountDownLatch never = new CountDownLatch(1);
                Task<Integer> gate = g.task("gate").cpu(ctx -> {
                    never.await(10, TimeUnit.SECONDS);
                    return 0;
                });
                Task<Integer> victim = g.task("victim").after(gate).cpu(ctx -> 1);
                AtomicReference<GraphRun> self = new AtomicReference<>();
                CountDownLatch submitted = new CountDownLatch(1);
                Task<Integer> canceller = g.task("canceller").cpu(ctx -> {
                    submitted.await(5, TimeUnit.SECONDS);
                    self.get().cancel(victim);
                    Blocking.interruptibleCall();
                    return 2;
                });
                GraphRun run = s.submit(g);
                self.set(run);
                submitted.countDown();
                run.whenDone(canceller).handle((r, e) -> {
                    never.countDown();
                    return null;
                });
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(10));
                Checks.assertConsistent(run);
                assertThat(run.state(canceller))
                        .as("canceller: %s", run.error(canceller))
                        .isEqualTo(TaskState.SUCCEEDED);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aCancelFromATaskStartedListenerMakesTheBodyBeginInterrupted() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicReference<GraphRun> current = new AtomicReference<>();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(ev -> {
                        if (ev.type() == EventType.TASK_STARTED) {
                            GraphRun r = current.get();
                            if (r != null && r.runId() == ev.runId()) {
                                r.cancel();
                            }
                        }
                    })
                    .build();
            try {
                for (int k = 0; k < 200; k++) {
                    TaskGraph g = TaskGraph.named("g" + k);
                    AtomicReference<String> saw = new AtomicReference<>("not run");
                    CountDownLatch go = new CountDownLatch(1);
                    g.task("a").cpu(ctx -> {
                        go.await(5, TimeUnit.SECONDS);
                        return 0;
                    });
                    Task<Integer> b = g.task("b").after("a").cpu(ctx -> {
                        saw.set("interrupted=" + Thread.currentThread().isInterrupted() + " cancelled="
                                + ctx.isCancelled());
                        return 1;
                    });
                    GraphRun run = s.submit(g);
                    // cancel the run as "a" starts; "b" never starts; check "a"
                    current.set(run);
                    go.countDown();
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    current.set(null);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aTimeOutInterruptsASleepingBodyAndTheRunEndsAtOnce() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                for (int k = 0; k < 20; k++) {
                    TaskGraph g = TaskGraph.named("t" + k);
                    CountDownLatch interrupted = new CountDownLatch(1);
                    Task<Integer> t = g.task("sleeper")
                            .timeout(Duration.ofMillis(20))
                            .cpu(ctx -> {
                                try {
                                    Blocking.untilInterrupted(Duration.ofSeconds(10));
                                } catch (InterruptedException ex) {
                                    interrupted.countDown();
                                    throw ex;
                                }
                                return 1;
                            });
                    long t0 = System.nanoTime();
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                    assertThat(ex).isNotNull();
                    assertThat(interrupted.await(2, TimeUnit.SECONDS))
                            .as("interrupt reached the body")
                            .isTrue();
                    assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(3));
                    Checks.assertConsistent(run);
                    assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    // ------------------------------------------------------------------ close()

    @Test
    void closeFromAListenerOnTheThreadThatCancelsTheRunDoesNotHang() {
        assertTimeoutPreemptively(Duration.ofSeconds(15), () -> {
            AtomicReference<Scheduler> self = new AtomicReference<>();
            AtomicInteger closes = new AtomicInteger();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(ev -> {
                        if (ev.type() == EventType.TASK_CANCELLED && closes.getAndIncrement() == 0) {
                            self.get().close(); // "stop everything once anything is cancelled"
                        }
                    })
                    .build();
            self.set(s);
            TaskGraph g = TaskGraph.named("g");
            CountDownLatch started = new CountDownLatch(1);
            Task<Integer> a = g.task("a").cpu(ctx -> {
                started.countDown();
                while (!ctx.isCancelled()) {
                    Thread.onSpinWait();
                }
                return 1;
            });
            g.task("b").after(a).cpu(ctx -> 2);
            GraphRun run = s.submit(g);
            assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
            Thread canceller = new Thread(run::cancel, "user-canceller");
            canceller.setDaemon(true);
            canceller.start();
            canceller.join(5000);
            assertThat(canceller.isAlive())
                    .as(
                            "run.cancel() from a user thread did not return: a TASK_CANCELLED listener"
                                    + " on that thread called close(), which waits for the run this thread is cancelling;"
                                    + " stack: %s",
                            java.util.Arrays.toString(canceller.getStackTrace()))
                    .isFalse();
            Checks.awaitEnd(run, Duration.ofSeconds(5));
            assertThat(s.awaitTermination(Duration.ofSeconds(5))).isTrue();
        });
    }

    @Test
    void closeFromAWhenDoneCallbackOnTheThreadThatCancelsATaskDoesNotHang() {
        assertTimeoutPreemptively(Duration.ofSeconds(15), () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            TaskGraph g = TaskGraph.named("g");
            CountDownLatch release = new CountDownLatch(1);
            Task<Integer> a = g.task("a").cpu(ctx -> {
                release.await(10, TimeUnit.SECONDS);
                return 1;
            });
            Task<Integer> b = g.task("b").after(a).cpu(ctx -> 2);
            GraphRun run = s.submit(g);
            run.whenDone(b).whenComplete((r, e) -> s.close());
            Thread canceller = new Thread(() -> run.cancel(b), "user-canceller");
            canceller.setDaemon(true);
            canceller.start();
            canceller.join(3000);
            boolean stuck = canceller.isAlive();
            release.countDown();
            canceller.join(3000);
            assertThat(stuck)
                    .as("run.cancel(b) blocked while a whenDone(b) callback on its thread called close()")
                    .isFalse();
            Checks.awaitEnd(run, Duration.ofSeconds(5));
            assertThat(s.awaitTermination(Duration.ofSeconds(5))).isTrue();
        });
    }

    private void closeFromTimerListener(EventType at) throws Exception {
        Set<Thread> before = Checks.threads();
        AtomicReference<Scheduler> self = new AtomicReference<>();
        AtomicReference<Throwable> closeErr = new AtomicReference<>();
        AtomicReference<String> thread = new AtomicReference<>();
        Scheduler s = Scheduler.builder()
                .threads(2)
                .threadNamePrefix("brk2-")
                .listener(ev -> {
                    if (ev.type() == at) {
                        thread.set(Thread.currentThread().getName());
                        try {
                            self.get().close();
                        } catch (Throwable t) {
                            closeErr.set(t);
                        }
                    }
                })
                .build();
        self.set(s);
        TaskGraph g = TaskGraph.named("g");
        AtomicInteger attempts = new AtomicInteger();
        Task<Integer> t = g.task("t")
                .timeout(Duration.ofMillis(30))
                .retries(2, Duration.ofMillis(10))
                .cpu(ctx -> {
                    if (attempts.incrementAndGet() == 1) {
                        Blocking.untilInterrupted(Duration.ofSeconds(5));
                    }
                    return 1;
                });
        g.task("after").after(t).cpu(ctx -> 2);
        GraphRun run = s.submit(g);
        Checks.awaitEnd(run, Duration.ofSeconds(10));
        Checks.assertConsistent(run);
        assertThat(closeErr.get()).isNull();
        assertThat(s.awaitTermination(Duration.ofSeconds(10)))
                .as("terminated after close() from %s on %s", at, thread.get())
                .isTrue();
        assertThat(run.status()).as("states %s", run.states()).isEqualTo(RunStatus.SUCCEEDED);
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(Checks.threads().stream()
                                .filter(th ->
                                        !before.contains(th) && th.getName().startsWith("brk2-") && th.isAlive())
                                .toList())
                        .as("threads left")
                        .isEmpty());
    }

    @Test
    void closeFromATimedOutListenerOnTheTimer() {
        assertTimeoutPreemptively(MAX, () -> closeFromTimerListener(EventType.TASK_TIMED_OUT));
    }

    @Test
    void closeFromARetryingListenerOnTheTimer() {
        assertTimeoutPreemptively(MAX, () -> closeFromTimerListener(EventType.TASK_RETRYING));
    }

    @Test
    void shutdownNowFromInsideABodyEndsTheRunAndTheScheduler() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicReference<Scheduler> self = new AtomicReference<>();
            Scheduler s = Scheduler.builder().threads(2).build();
            self.set(s);
            TaskGraph inner = TaskGraph.named("inner");
            inner.task("i").cpu(ctx -> 3);
            TaskGraph g = TaskGraph.named("g");
            AtomicReference<Object> nested = new AtomicReference<>();
            Task<Integer> a = g.task("a").cpu(ctx -> {
                self.get().shutdown();
                try {
                    nested.set(ctx.execute(inner).result(inner.tasks().get(0)));
                } catch (Throwable ex) {
                    nested.set(ex);
                }
                self.get().shutdownNow();
                return 1;
            });
            GraphRun run = s.submit(g);
            Checks.awaitEnd(run, Duration.ofSeconds(10));
            Checks.assertConsistent(run);
            assertThat(nested.get()).as("nested run after shutdown from a body").isEqualTo(3);
            assertThat(s.awaitTermination(Duration.ofSeconds(10))).isTrue();
        });
    }
}
