package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.github.resilience4j.core.IntervalBiFunction;
import io.github.resilience4j.retry.RetryConfig;
import io.hts.engine.graph.Releasable;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RetryOnResultBreakTests {

    static final Duration MAX = Duration.ofSeconds(30);

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(3));
    }

    static final class Buf implements Releasable {
        final int value;
        final AtomicInteger releases = new AtomicInteger();
        volatile boolean reading;
        final ConcurrentLinkedQueue<String> problems;

        Buf(int value, ConcurrentLinkedQueue<String> problems) {
            this.value = value;
            this.problems = problems;
        }

        int read() {
            reading = true;
            try {
                if (releases.get() > 0) {
                    problems.add("read of a released buffer " + value);
                }
                Thread.onSpinWait();
                return value;
            } finally {
                reading = false;
            }
        }

        @Override
        public void release() {
            if (reading) {
                problems.add("released while read " + value);
            }
            releases.incrementAndGet();
        }

        @Override
        public String toString() {
            return "Buf" + value;
        }
    }

    static RetryConfig onResult(int maxAttempts, long waitMs, java.util.function.Predicate<Object> p) {
        return RetryConfig.custom()
                .maxAttempts(maxAttempts)
                .waitDuration(Duration.ofMillis(waitMs))
                .retryOnResult(p)
                .build();
    }

    @Test
    void groupMembersRetriedOnReleasableResultsReleaseEachRejectedOnceAndKeepTheLast() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                for (int round = 0; round < 30; round++) {
                    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
                    ConcurrentLinkedQueue<Buf> all = new ConcurrentLinkedQueue<>();
                    TaskGraph g = TaskGraph.named("g" + round);
                    TaskGroup<Buf> grp = g.group(
                            "m",
                            6,
                            (i, t) -> t.retry(onResult(4, 1, r -> ((Buf) r).value < 3))
                                    .cpu(ctx -> {
                                        Buf b = new Buf(ctx.attempt() + (ctx.groupIndex() % 2), problems);
                                        all.add(b);
                                        return b;
                                    }));
                    Task<Integer> sum = g.task("sum").after(grp).cpu(ctx -> {
                        int x = 0;
                        for (Buf b : ctx.inputs(grp)) {
                            x += b.read();
                        }
                        return x;
                    });
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(10));
                    Checks.assertConsistent(run);
                    assertThat(ex).isNull();
                    List<Buf> finals = run.results(grp);
                    for (Buf b : all) {
                        boolean isFinal = finals.stream().anyMatch(f -> f == b);
                        if (!isFinal) {
                            assertThat(b.releases.get())
                                    .as("rejected %s released once", b)
                                    .isEqualTo(1);
                        }
                    }
                    assertThat(finals).allSatisfy(b -> assertThat(b.value).isGreaterThanOrEqualTo(3));
                    assertThat(problems).isEmpty();
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void whenAttemptsRunOutTheLastResultStandsUnreleased() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
                ConcurrentLinkedQueue<Buf> all = new ConcurrentLinkedQueue<>();
                TaskGraph g = TaskGraph.named("g");
                Task<Buf> t = g.task("t").retry(onResult(3, 1, r -> true)).cpu(ctx -> {
                    Buf b = new Buf(ctx.attempt(), problems);
                    all.add(b);
                    return b;
                });
                GraphRun run = s.submit(g);
                Checks.awaitEnd(run, Duration.ofSeconds(10));
                Checks.assertConsistent(run);
                assertThat(run.state(t)).isEqualTo(TaskState.SUCCEEDED);
                assertThat(all).hasSize(3);
                Buf last = run.result(t);
                assertThat(last.releases.get()).isZero();
                assertThat(all.stream().filter(b -> b != last).mapToInt(b -> b.releases.get()))
                        .containsOnly(1);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aTaskCancelDuringTheResultBackoffEndsAtOnceWithoutAnotherAttempt() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicInteger retrying = new AtomicInteger();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(ev -> {
                        if (ev.type() == EventType.TASK_RETRYING) {
                            retrying.incrementAndGet();
                        }
                    })
                    .build();
            try {
                TaskGraph g = TaskGraph.named("g");
                AtomicInteger attempts = new AtomicInteger();
                Task<Integer> t = g.task("t")
                        .retry(onResult(5, 5_000, r -> true))
                        .cpu(ctx -> {
                            attempts.incrementAndGet();
                            return 1;
                        });
                Task<Integer> d = g.task("d").after(t).cpu(ctx -> 2);
                Task<Integer> other = g.task("other").cpu(ctx -> 3);
                GraphRun run = s.submit(g);
                await().atMost(Duration.ofSeconds(5)).until(() -> retrying.get() > 0);
                assertThat(run.state(t)).isEqualTo(TaskState.RETRYING);
                run.cancel(t);
                Checks.awaitEnd(run, Duration.ofSeconds(3)); // well before the 5 s backoff would end
                Checks.assertConsistent(run);
                assertThat(run.state(t)).isEqualTo(TaskState.CANCELLED);
                assertThat(run.state(d)).isEqualTo(TaskState.CANCELLED);
                assertThat(run.state(other)).isEqualTo(TaskState.SUCCEEDED);
                await().during(Duration.ofMillis(100))
                        .atMost(Duration.ofSeconds(1))
                        .until(() -> attempts.get() == 1); // no attempt follows the cancel
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aFailFastFailureElsewhereEndsATaskInItsResultBackoffWithThatCause() {
        assertTimeoutPreemptively(MAX, () -> {
            CountDownLatch inBackoff = new CountDownLatch(1);
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(e -> {
                        if (e.type() == EventType.TASK_RETRYING) {
                            inBackoff.countDown();
                        }
                    })
                    .build();
            try {
                TaskGraph g = TaskGraph.named("g");
                Task<Integer> t =
                        g.task("t").retry(onResult(5, 5_000, r -> true)).cpu(ctx -> 1);
                Task<Integer> bad = g.task("bad").cpu(ctx -> {
                    inBackoff.await(5, TimeUnit.SECONDS); // fails while t waits out its backoff
                    throw new IllegalStateException("boom");
                });
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(4)); // before the 5 s backoff
                Checks.assertConsistent(run);
                assertThat(ex).isNotNull();
                assertThat(run.state(t)).isEqualTo(TaskState.CANCELLED);
                assertThat(run.error(t).orElseThrow())
                        .isInstanceOf(TaskCancelledException.class)
                        .hasRootCauseMessage("boom");
            } finally {
                closeQuietly(s);
            }
        });
    }

    @ParameterizedTest(name = "answer {0}, throws {1}")
    @CsvSource({
        "-1, false",
        "-1, true",
        "-1000, false",
        "-1000, true",
        "-9223372036854775808, false",
        "-9223372036854775808, true",
        "0, false",
        "0, true"
    })
    void aResultIntervalFunctionThatThrowsOrAnswersNegativeLeavesTheResultStanding(long answer, boolean throwIt) {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("g");
                AtomicInteger attempts = new AtomicInteger();
                IntervalBiFunction<Object> f = (n, either) -> {
                    if (throwIt) {
                        throw new IllegalStateException("interval");
                    }
                    return answer;
                };
                RetryConfig cfg = RetryConfig.custom()
                        .maxAttempts(3)
                        .intervalBiFunction(f)
                        .retryOnResult(r -> ((Integer) r) < 100)
                        .build();
                Task<Integer> t = g.task("t").retry(cfg).cpu(ctx -> attempts.incrementAndGet());
                Task<Integer> d = g.task("d").after(t).cpu(ctx -> ctx.input(t) * 10);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                String what = "answer " + answer + " throw " + throwIt + " states " + run.states() + " ex " + ex;
                if (!throwIt && answer == 0) {
                    assertThat(run.state(t)).as(what).isEqualTo(TaskState.SUCCEEDED);
                    assertThat(attempts.get()).as(what).isEqualTo(3);
                } else {
                    assertThat(run.state(t)).as(what).isEqualTo(TaskState.SUCCEEDED);
                    assertThat(run.result(d)).as(what).isEqualTo(run.result(t) * 10);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void retriesOnResultUnderATimeLimitWithATimedOutAttempt() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                for (int round = 0; round < 10; round++) {
                    TaskGraph g = TaskGraph.named("g" + round);
                    AtomicInteger attempts = new AtomicInteger();
                    Task<Integer> t = g.task("t")
                            .timeout(Duration.ofMillis(50))
                            .retry(RetryConfig.custom()
                                    .maxAttempts(4)
                                    .waitDuration(Duration.ofMillis(1))
                                    .retryOnResult(r -> ((Integer) r) < 2)
                                    .retryExceptions(Exception.class)
                                    .build())
                            .cpu(ctx -> {
                                int a = attempts.incrementAndGet();
                                if (a == 1) {
                                    Blocking.untilInterrupted(Duration.ofSeconds(2)); // times out
                                }
                                if (a == 2) {
                                    return 1; // rejected
                                }
                                return 5;
                            });
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    if (ex == null) {
                        assertThat(run.result(t)).isEqualTo(5);
                    } else {
                        assertThat(run.state(t))
                                .as("states %s %s", run.states(), ex)
                                .isEqualTo(TaskState.FAILED);
                    }
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void retryOnResultRacingAFailFastStopNeverHangsOrMiscounts() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
                for (int round = 0; round < 300; round++) {
                    TaskGraph g = TaskGraph.named("g" + round);
                    CountDownLatch go = new CountDownLatch(2);
                    ConcurrentLinkedQueue<Buf> all = new ConcurrentLinkedQueue<>();
                    Task<Buf> t = g.task("t")
                            .retry(onResult(3, 0, r -> ((Buf) r).value == 0))
                            .cpu(ctx -> {
                                go.countDown();
                                go.await(1, TimeUnit.SECONDS);
                                Buf b = new Buf(ctx.attempt() > 1 ? 1 : 0, problems);
                                all.add(b);
                                return b;
                            });
                    Task<Integer> d =
                            g.task("d").after(t).cpu(ctx -> ctx.input(t).read());
                    g.task("bad").cpu(ctx -> {
                        go.countDown();
                        go.await(1, TimeUnit.SECONDS);
                        throw new IllegalStateException("boom");
                    });
                    GraphRun run = s.submit(g);
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    assertThat(run.status()).isEqualTo(RunStatus.FAILED);
                    for (Buf b : all) {
                        assertThat(b.releases.get())
                                .as("round %d %s states %s", round, b, run.states())
                                .isLessThanOrEqualTo(1);
                    }
                }
                assertThat(problems).isEmpty();
            } finally {
                closeQuietly(s);
            }
        });
    }
}
