package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SettingsBreakTests {

    static final Duration MAX = Duration.ofSeconds(10);

    @Test
    void resourceAmountsThatOverflowWhenMergedAreRejected() {
        TaskGraph g = TaskGraph.named("overflow");
        assertThatThrownBy(() -> g.task("t")
                        .resource("io", Long.MAX_VALUE)
                        .resource("io", Long.MAX_VALUE)
                        .cpu(ctx -> 1))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("'t'")
                .hasMessageContaining("io");
    }

    @Test
    void aDemandLargerThanTheCapacityEndsOrIsRejected() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).resource("io", 2).build();
            try {
                TaskGraph g = TaskGraph.named("toolarge");
                g.task("big").resource("io", 3).cpu(ctx -> 1);
                GraphRun run;
                try {
                    run = s.submit(g);
                } catch (GraphValidationException ex) {
                    assertThat(ex.getMessage()).contains("big").contains("io");
                    return;
                }
                Checks.awaitEnd(run, Duration.ofSeconds(3));
                Checks.assertConsistent(run);
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }

    @Test
    void aZeroCapacityResourceEndsOrIsRejected() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).resource("io", 0).build();
            try {
                TaskGraph g = TaskGraph.named("zero");
                g.task("t").resource("io", 1).cpu(ctx -> 1);
                GraphRun run;
                try {
                    run = s.submit(g);
                } catch (GraphValidationException ex) {
                    assertThat(ex.getMessage()).contains("'t'").contains("io");
                    return;
                }
                Checks.awaitEnd(run, Duration.ofSeconds(3));
                Checks.assertConsistent(run);
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }

    @Test
    void timeLimiterInstancesOutOfRangeAreRejectedAtSubmitNamingTheTask() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("limiter");
                TimeLimiter zero = TimeLimiter.of(TimeLimiterConfig.custom()
                        .timeoutDuration(Duration.ZERO)
                        .build());
                g.task("zero").timeout(zero).cpu(ctx -> 1);
                assertThatThrownBy(() -> s.submit(g))
                        .isInstanceOf(GraphValidationException.class)
                        .hasMessageContaining("zero");
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }

    @Test
    void aHugeTimeLimiterInstanceIsRejectedAtSubmit() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("limiter2");
                TimeLimiter huge = TimeLimiter.of(TimeLimiterConfig.custom()
                        .timeoutDuration(Duration.ofSeconds(Long.MAX_VALUE))
                        .build());
                g.task("huge").timeout(huge).cpu(ctx -> 1);
                GraphRun run;
                try {
                    run = s.submit(g);
                } catch (GraphValidationException ex) {
                    assertThat(ex.getMessage()).contains("huge");
                    return;
                }
                Checks.awaitEnd(run, Duration.ofSeconds(3));
                Checks.assertConsistent(run);
                assertThat(run.state(g.find("huge").orElseThrow())).isEqualTo(TaskState.SUCCEEDED);
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }

    @Test
    void anIntervalFunctionThatThrowsStillEndsTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("interval");
                IntervalFunction bad = attempt -> {
                    throw new IllegalStateException("interval exploded");
                };
                Task<Integer> t = g.task("t").retries(3, bad).cpu(ctx -> {
                    throw new IllegalArgumentException("body failed");
                });
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                Checks.assertConsistent(run);
                assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }

    @Test
    void anIntervalFunctionReturningNegativeStillEndsTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("negative");
                AtomicInteger calls = new AtomicInteger();
                Task<Integer> t = g.task("t").retries(3, attempt -> -1000L).cpu(ctx -> {
                    calls.incrementAndGet();
                    throw new IllegalArgumentException("body failed");
                });
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                Checks.assertConsistent(run);
                assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
                assertThat(calls)
                        .as("a backoff that answers a negative wait does not retry")
                        .hasValue(1);
                assertThat(run.failures().get(0).error().getSuppressed())
                        .singleElement()
                        .satisfies(x -> assertThat(x)
                                .hasMessageContaining("task 't'")
                                .hasMessageContaining("-1000 ms")
                                .hasMessageContaining("accepted is a wait of 0 ms or more"));
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }

    @Test
    void aRetryPredicateThatThrowsStillEndsTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("predicate");
                RetryConfig cfg = RetryConfig.custom()
                        .maxAttempts(3)
                        .waitDuration(Duration.ofMillis(1))
                        .retryOnException(e -> {
                            throw new IllegalStateException("predicate exploded");
                        })
                        .build();
                Task<Integer> t = g.task("t").retry(cfg).cpu(ctx -> {
                    throw new IllegalArgumentException("body failed");
                });
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                Checks.assertConsistent(run);
                assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }

    @Test
    void aRetryOnResultConfigDoesNotHangTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder().threads(2).build();
            try {
                TaskGraph g = TaskGraph.named("onresult");
                RetryConfig cfg = RetryConfig.<Object>custom()
                        .maxAttempts(3)
                        .waitDuration(Duration.ofMillis(1))
                        .retryOnResult(r -> {
                            throw new IllegalStateException("result predicate exploded");
                        })
                        .build();
                Task<Integer> t = g.task("t").retry(cfg).cpu(ctx -> 5);
                GraphRun run = s.submit(g);
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }

    @Test
    void badSchedulerSettingsNameTheSettingAndTheRange() {
        assertThatThrownBy(() -> Scheduler.builder().threads(0))
                .hasMessageContaining("thread")
                .hasMessageContaining("1");
        assertThatThrownBy(() -> Scheduler.builder().threads(-5)).hasMessageContaining("-5");
        assertThatThrownBy(() -> Scheduler.builder().threads(65535)).hasMessageContaining("65535");
        assertThatThrownBy(() -> Scheduler.builder().spinsBeforePark(-1)).hasMessageContaining("-1");
        assertThatThrownBy(() -> Scheduler.builder().resource(null, 1)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void aBlankSchedulerResourceNameIsRejected() {
        assertThatThrownBy(() -> Scheduler.builder().resource(" ", 1))
                .as("blank resource name")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aBlankTaskResourceNameIsRejectedNamingTheTask() {
        TaskGraph g = TaskGraph.named("bad");
        assertThatThrownBy(() -> g.task("a").resource("", 1))
                .as("blank resource name")
                .hasMessageContaining("'a'");
    }

    @Test
    void badTaskSettingsNameTheTaskAndTheRange() {
        TaskGraph g = TaskGraph.named("bad");
        assertThatThrownBy(() -> g.task("a").timeout(Duration.ZERO))
                .hasMessageContaining("'a'")
                .hasMessageContaining("1 ms");
        assertThatThrownBy(() -> g.task("a").timeout(Duration.ofNanos(999_999))).hasMessageContaining("'a'");
        assertThatThrownBy(() -> g.task("a").timeout(Duration.ofDays(36_526))).hasMessageContaining("'a'");
        assertThatThrownBy(() -> g.task("a").timeout(Duration.ofSeconds(-1))).hasMessageContaining("'a'");
        assertThatThrownBy(() -> g.task("a").retries(-1))
                .hasMessageContaining("'a'")
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> g.task("a").retries(Integer.MAX_VALUE)).hasMessageContaining("'a'");
        assertThatThrownBy(() -> g.task("a").retries(1, Duration.ofMillis(-1))).hasMessageContaining("'a'");
        assertThatThrownBy(() -> g.task("a").cost(Duration.ofMillis(-1))).hasMessageContaining("'a'");
        assertThatThrownBy(() -> g.task("a").resource("io", 0)).hasMessageContaining("'a'");
        assertThatThrownBy(() -> g.task("a").priority(-1)).hasMessageContaining("'a'");
        assertThatThrownBy(() -> g.group("grp", -1, (i, t) -> t.cpu(c -> 1))).hasMessageContaining("grp");
    }
}
