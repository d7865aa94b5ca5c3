package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class BodyAndListenerBreakTests {

    static final Duration MAX = Duration.ofSeconds(15);

    /** An exception every accessor of which throws. */
    static final class Nasty extends RuntimeException {
        Nasty() {
            super("nasty");
        }

        @Override
        public String getMessage() {
            throw new IllegalStateException("getMessage threw");
        }

        @Override
        public String getLocalizedMessage() {
            throw new IllegalStateException("getLocalizedMessage threw");
        }

        @Override
        public String toString() {
            throw new IllegalStateException("toString threw");
        }

        @Override
        public synchronized Throwable getCause() {
            throw new IllegalStateException("getCause threw");
        }
    }

    @Test
    void aBodyThrowingAnExceptionWhoseGetCauseThrowsWhileTheRunStopsStillEndsTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                for (int round = 0; round < 5; round++) {
                    TaskGraph g = TaskGraph.named("nasty-" + round);
                    CountDownLatch bStarted = new CountDownLatch(1);
                    Task<Integer> a = g.task("a").cpu(ctx -> {
                        bStarted.await(5, TimeUnit.SECONDS);
                        throw new IllegalArgumentException("a failed");
                    });
                    Task<Integer> b = g.task("b").cpu(ctx -> {
                        bStarted.countDown();
                        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                        while (!ctx.isCancelled() && System.nanoTime() < until) {
                            Thread.onSpinWait();
                        }
                        throw new Nasty();
                    });
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                    assertThat(ex).isNotNull();
                    Checks.assertConsistent(run);
                    assertThat(run.state(a)).isEqualTo(TaskState.FAILED);
                }
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(2));
            }
        });
    }

    @Test
    void aBodyThrowingANastyExceptionAloneFailsTheRunWithIt() {
        assertTimeoutPreemptively(MAX, () -> {
            try (Scheduler s = Scheduler.builder().threads(2).build()) {
                TaskGraph g = TaskGraph.named("nasty-alone");
                Task<Integer> a = g.task("a").retries(1, Duration.ofMillis(1)).cpu(ctx -> {
                    throw new Nasty();
                });
                g.task("b").after(a).cpu(ctx -> 1);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                assertThat(ex.getCause()).isInstanceOf(Nasty.class);
                Checks.assertConsistent(run);
                run.profile().toString();
                run.profile().toChromeTrace();
                run.profile().toDot();
                run.diagnose().toString();
                run.toString();
            }
        });
    }

    @Test
    void bodiesThrowingErrorsFailTheirTasksAndTheRunEnds() {
        List<Throwable> errors = List.of(
                new StackOverflowError("fake soe"),
                new OutOfMemoryError("fake oom"),
                new AssertionError("assert"),
                new LinkageError("link"),
                new InternalError("internal"));
        assertTimeoutPreemptively(MAX, () -> {
            try (Scheduler s = Scheduler.builder().threads(2).build()) {
                for (Throwable err : errors) {
                    TaskGraph g = TaskGraph.named("error-" + err.getClass().getSimpleName());
                    Task<Integer> a = g.task("a").cpu(ctx -> {
                        if (err instanceof Error e) {
                            throw e;
                        }
                        return 1;
                    });
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                    assertThat(ex).as(err.toString()).isNotNull();
                    assertThat(ex.getCause()).isSameAs(err);
                    Checks.assertConsistent(run);
                }
                // the scheduler still works
                TaskGraph g = TaskGraph.named("after");
                Task<Integer> ok = g.task("ok").cpu(ctx -> 7);
                assertThat(s.submit(g).await(Duration.ofSeconds(5)).result(ok)).isEqualTo(7);
            }
        });
    }

    @Test
    void aRealStackOverflowInABodyFailsTheTask() {
        assertTimeoutPreemptively(MAX, () -> {
            try (Scheduler s = Scheduler.builder().threads(1).build()) {
                TaskGraph g = TaskGraph.named("soe");
                Task<Integer> a = g.task("a").cpu(ctx -> recurse(0));
                Task<Integer> b = g.task("b").after(a).cpu(ctx -> 1);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(10));
                assertThat(ex).isNotNull();
                assertThat(ex.getCause()).isInstanceOf(StackOverflowError.class);
                Checks.assertConsistent(run);
            }
        });
    }

    static int recurse(int n) {
        return recurse(n + 1) + 1;
    }

    /** What a listener throws: a runtime exception, errors, and one whose message cannot be read. */
    static Stream<Named<Throwable>> thrownByListeners() {
        return Stream.of(
                Named.of("RuntimeException", new RuntimeException("rt")),
                Named.of("StackOverflowError", new StackOverflowError("soe")),
                Named.of("OutOfMemoryError", new OutOfMemoryError("oom")),
                Named.of("Nasty", new Nasty()),
                Named.of("AssertionError", new AssertionError("ae")));
    }

    @ParameterizedTest
    @MethodSource("thrownByListeners")
    void listenersThrowingAtEveryEventTypeNeverBreakARun(Throwable kind) {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicInteger calls = new AtomicInteger();
            TaskListener thrower = e -> {
                calls.incrementAndGet();
                if (kind instanceof RuntimeException r) {
                    throw r;
                }
                throw (Error) kind;
            };
            try (Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(thrower)
                    .listener(thrower)
                    .build()) {
                for (int round = 0; round < 10; round++) {
                    TaskGraph g = TaskGraph.named("listeners-" + round);
                    Task<Integer> root = g.task("root").cpu(ctx -> 1);
                    TaskGroup<Integer> mid = g.group(
                            "mid",
                            6,
                            (i, t) -> t.after(root)
                                    .retries(1, Duration.ofMillis(1))
                                    .timeout(Duration.ofMillis(200))
                                    .cpu(ctx -> {
                                        if (i == 1 && ctx.attempt() == 1) {
                                            throw new IllegalStateException("retry me");
                                        }
                                        if (i == 2) {
                                            Blocking.untilInterrupted(Duration.ofSeconds(1));
                                        }
                                        return ctx.input(root) + i;
                                    }));
                    g.task("sink").after(mid).cpu(ctx -> ctx.inputs(mid).size());
                    GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    assertThat(run.state(mid.get(1)))
                            .as(kind.getClass().getName())
                            .isEqualTo(TaskState.SUCCEEDED);
                    assertThat(run.state(mid.get(2))).isEqualTo(TaskState.FAILED);
                }
            }
            assertThat(calls.get()).isPositive();
        });
    }

    @Test
    void aListenerWhoseWantsRoutineEventsThrowsDoesNotStopOtherListeners() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicInteger asked = new AtomicInteger();
            TaskListener weird = new TaskListener() {
                @Override
                public void onEvent(TaskEvent event) {}

                @Override
                public boolean wantsRoutineEvents() {
                    if (Thread.currentThread().getName().startsWith("hts-worker") && asked.incrementAndGet() > 0) {
                        throw new IllegalStateException("wantsRoutineEvents threw");
                    }
                    return true;
                }
            };
            ConcurrentLinkedQueue<EventType> seen = new ConcurrentLinkedQueue<>();
            try (Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(weird)
                    .listener(e -> seen.add(e.type()))
                    .build()) {
                TaskGraph g = TaskGraph.named("routine");
                Task<Integer> a = g.task("a").cpu(ctx -> 1);
                GraphRun run = s.submit(g);
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(run.result(a)).isEqualTo(1);
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(2))
                        .untilAsserted(() -> assertThat(seen)
                                .contains(EventType.TASK_STARTED, EventType.TASK_SUCCEEDED, EventType.RUN_SUCCEEDED));
            }
        });
    }

    @Test
    void aListenerThatInterruptsItsThreadDoesNotFailTheNextTask() {
        assertTimeoutPreemptively(MAX, () -> {
            TaskListener interrupter = e -> {
                if (Thread.currentThread().getName().startsWith("hts-worker")
                        && (e.type() == EventType.TASK_SUCCEEDED
                                || e.type() == EventType.TASK_STARTED
                                || e.type() == EventType.TASK_READY)) {
                    Thread.currentThread().interrupt();
                }
            };
            try (Scheduler s =
                    Scheduler.builder().threads(1).listener(interrupter).build()) {
                TaskGraph g = TaskGraph.named("interrupting-listener");
                Task<Integer> a = g.task("a").cpu(ctx -> 1);
                Task<Integer> b = g.task("b").after(a).cpu(ctx -> {
                    Blocking.interruptibleCall();
                    return ctx.input(a) + 1;
                });
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).as("a listener's interrupt failed a body").isNull();
                assertThat(run.result(b)).isEqualTo(2);
            }
        });
    }

    @Test
    void runEventsAreDeliveredOnlyWhenTheRunIsDone() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicReference<GraphRun> current = new AtomicReference<>();
            ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
            TaskListener checker = e -> {
                GraphRun r = current.get();
                if (r == null || r.runId() != e.runId()) {
                    return;
                }
                if (e.type() == EventType.RUN_SUCCEEDED
                        || e.type() == EventType.RUN_FAILED
                        || e.type() == EventType.RUN_CANCELLED) {
                    if (!r.isDone()) {
                        problems.add(e.type() + " while status " + r.status());
                    }
                }
            };
            try (Scheduler s = Scheduler.builder().threads(2).listener(checker).build()) {
                for (int k = 0; k < 50; k++) {
                    TaskGraph g = TaskGraph.named("ev-" + k);
                    CountDownLatch go = new CountDownLatch(1);
                    int kk = k;
                    g.task("a").cpu(ctx -> {
                        go.await(5, TimeUnit.SECONDS);
                        if (kk % 2 == 0) {
                            throw new IllegalStateException("x");
                        }
                        return 1;
                    });
                    GraphRun run = s.submit(g);
                    current.set(run);
                    go.countDown();
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                }
            }
            assertThat(problems).isEmpty();
        });
    }

    @Test
    void aRetryWhoseEventConsumerThrowsDoesNotHangTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                Retry retry = Retry.of(
                        "exploding",
                        RetryConfig.custom()
                                .maxAttempts(3)
                                .waitDuration(Duration.ofMillis(1))
                                .build());
                retry.getEventPublisher().onEvent(e -> {
                    throw new IllegalStateException("retry event consumer threw");
                });
                TaskGraph g = TaskGraph.named("r4j-retry-consumer");
                AtomicInteger attempts = new AtomicInteger();
                Task<Integer> a = g.task("a").retry(retry).cpu(ctx -> {
                    if (attempts.incrementAndGet() < 3) {
                        throw new IllegalStateException("again");
                    }
                    return 1;
                });
                GraphRun run = s.submit(g);
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                // Resilience4j's retry throws when its consumer throws, so it cannot decide: the task
                // is not retried and fails with its body's error, the consumer's attached.
                assertThat(run.state(a)).isEqualTo(TaskState.FAILED);
                assertThat(attempts).hasValue(1);
                assertThat(run.failures().get(0).error()).hasMessage("again");
                assertThat(run.failures().get(0).error().getSuppressed())
                        .singleElement()
                        .satisfies(x -> assertThat(x).hasMessage("retry event consumer threw"));
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(2));
            }
        });
    }

    @Test
    void aTimeLimiterWhoseEventConsumerThrowsDoesNotHangASucceedingTask() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TimeLimiter limiter = TimeLimiter.of(TimeLimiterConfig.custom()
                        .timeoutDuration(Duration.ofSeconds(2))
                        .build());
                limiter.getEventPublisher().onEvent(e -> {
                    throw new IllegalStateException("limiter event consumer threw");
                });
                TaskGraph g = TaskGraph.named("r4j-limiter-consumer");
                Task<Integer> b = g.task("b").timeout(limiter).cpu(ctx -> 2);
                GraphRun run = s.submit(g);
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(run.state(b)).isEqualTo(TaskState.SUCCEEDED);
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(2));
            }
        });
    }
}
