package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.retry.RetryConfig;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DeviceRaceBreakTests {

    static final Duration MAX = Duration.ofSeconds(30);

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(3));
    }

    @Test
    void aBulkheadedTaskWhoseDelayedDispatchThrowsDoesNotHangTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicInteger dispatches = new AtomicInteger();
            ScriptedBackend inner =
                    new ScriptedBackend(2, (b, t) -> {
                        try {
                            Blocking.untilInterrupted(Duration.ofMillis(100));
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                        ScriptedBackend.runAndReport(b, t);
                    }) {
                        @Override
                        public void dispatch(DeviceTask task) {
                            if (dispatches.incrementAndGet() == 2) {
                                throw new IllegalStateException("device refused the second task");
                            }
                            super.dispatch(task);
                        }
                    };
            CircuitBreakingBackend gpu = bulkheadOfOne(inner);
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
            try {
                TaskGraph g = TaskGraph.named("g");
                Task<Integer> a = g.task("a").gpu(ctx -> 1);
                Task<Integer> b = g.task("b").gpu(ctx -> 2);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(ex).isNotNull();
                assertThat(ex.getCause()).hasMessage("device refused the second task");
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aDispatchThatThrowsDoesNotLeakTheBulkheadPermitAndHangLaterRuns() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicBoolean throwNext = new AtomicBoolean(true);
            ScriptedBackend inner = new ScriptedBackend(2, ScriptedBackend::runAndReport) {
                @Override
                public void dispatch(DeviceTask task) {
                    if (throwNext.getAndSet(false)) {
                        throw new IllegalStateException("device refused a task");
                    }
                    super.dispatch(task);
                }
            };
            CircuitBreakingBackend gpu = bulkheadOfOne(inner);
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
            try {
                TaskGraph g1 = TaskGraph.named("first");
                g1.task("x").gpu(ctx -> 1);
                GraphRun r1 = s.submit(g1);
                GraphRunException ex1 = Checks.awaitEnd(r1, Duration.ofSeconds(5));
                Checks.assertConsistent(r1);
                assertThat(ex1).isNotNull();
                TaskGraph g2 = TaskGraph.named("second");
                Task<Integer> y = g2.task("y").gpu(ctx -> 2);
                GraphRun r2 = s.submit(g2);
                GraphRunException ex2 = Checks.awaitEnd(r2, Duration.ofSeconds(5));
                Checks.assertConsistent(r2);
                assertThat(ex2).isNull();
                assertThat(r2.result(y)).isEqualTo(2);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aRecordExceptionPredicateThatThrowsKeepsTheDevicesReport() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend inner = ScriptedBackend.wellBehaved();
            CircuitBreaker breaker = CircuitBreaker.of(
                    "cb",
                    CircuitBreakerConfig.custom()
                            .recordException(e -> {
                                throw new IllegalStateException("predicate");
                            })
                            .build());
            breaker.getEventPublisher().onEvent(e -> {
                throw new StackOverflowError("consumer");
            });
            CircuitBreakingBackend gpu =
                    new CircuitBreakingBackend(inner, breaker, null, CircuitBreakingBackend.WhenOpen.FAIL);
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build();
            try {
                for (int k = 0; k < 20; k++) {
                    TaskGraph g = TaskGraph.named("g" + k);
                    Task<Integer> bad = g.task("bad").gpu(ctx -> {
                        throw new ArithmeticException("real");
                    });
                    Task<Integer> good = g.task("good").gpu(ctx -> 3);
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    assertThat(run.error(bad).orElseThrow()).isInstanceOf(ArithmeticException.class);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void startRacingFallBackToCpuRunsTheTaskExactlyOnce() {
        assertTimeoutPreemptively(MAX, () -> {
            AtomicInteger cpuRuns = new AtomicInteger();
            AtomicInteger gpuRuns = new AtomicInteger();
            ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                AtomicBoolean started = new AtomicBoolean();
                AtomicBoolean moved = new AtomicBoolean();
                started.set(startRacing(t, () -> moved.set(t.fallBackToCpu("racing"))));
                if (started.get() == moved.get()) {
                    problems.add("start " + started.get() + " fallBack " + moved.get());
                }
                if (started.get()) {
                    be.report(t, ScriptedBackend.runBody(be, t));
                }
            });
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(b).build();
            try {
                for (int k = 0; k < 300; k++) {
                    TaskGraph g = TaskGraph.named("g" + k);
                    Task<Integer> t = g.task("t")
                            .bodies(
                                    ctx -> {
                                        cpuRuns.incrementAndGet();
                                        return 1;
                                    },
                                    ctx -> {
                                        gpuRuns.incrementAndGet();
                                        return 1;
                                    });
                    g.task("d").after(t).cpu(ctx -> ctx.input(t) + 1);
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    assertThat(ex).as("round %d", k).isNull();
                }
                assertThat(problems).isEmpty();
                assertThat(cpuRuns.get() + gpuRuns.get()).isEqualTo(300);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aReportRacingItsOwnStartFromAnotherThreadEndsTheTaskOnce() {
        assertTimeoutPreemptively(MAX, () -> {
            ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                startRacing(t, () -> be.complete(t, 42));
            });
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(b).build();
            try {
                for (int k = 0; k < 300; k++) {
                    TaskGraph g = TaskGraph.named("g" + k);
                    Task<Integer> t = g.task("t").timeout(Duration.ofSeconds(3)).gpu(ctx -> 1);
                    Task<Integer> d = g.task("d").after(t).cpu(ctx -> ctx.input(t) + 1);
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(6));
                    Checks.assertConsistent(run);
                    if (ex == null) {
                        assertThat(run.result(d)).isEqualTo(43);
                    } else {
                        assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
                        assertThat(run.error(t).orElseThrow())
                                .as("round %d", k)
                                .hasMessageContaining("without starting it");
                    }
                }
                assertThat(b.reportErrors).isEmpty();
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aDeviceTaskRetriedOnItsResultIsDispatchedAgainAndEndsOnce() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = ScriptedBackend.wellBehaved();
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(b).build();
            try {
                for (int k = 0; k < 50; k++) {
                    TaskGraph g = TaskGraph.named("g" + k);
                    Task<Integer> t = g.task("t")
                            .timeout(Duration.ofSeconds(2))
                            .retry(RetryConfig.custom()
                                    .maxAttempts(4)
                                    .waitDuration(Duration.ofMillis(1))
                                    .retryOnResult(r -> ((Integer) r) < 3)
                                    .build())
                            .gpu(ctx -> ctx.attempt());
                    Task<Integer> d = g.task("d").after(t).cpu(ctx -> ctx.input(t) * 2);
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    assertThat(ex).isNull();
                    assertThat(run.result(t)).isGreaterThanOrEqualTo(3);
                    assertThat(run.result(d)).isEqualTo(run.result(t) * 2);
                }
                assertThat(b.reportErrors).isEmpty();
            } finally {
                closeQuietly(s);
            }
        });
    }

    /** A default breaker and a bulkhead of one concurrent call that queues (WAIT) the rest. */
    private static CircuitBreakingBackend bulkheadOfOne(ScriptedBackend inner) {
        return new CircuitBreakingBackend(
                inner,
                CircuitBreaker.of("cb", CircuitBreakerConfig.ofDefaults()),
                Bulkhead.of(
                        "bh",
                        BulkheadConfig.custom()
                                .maxConcurrentCalls(1)
                                .maxWaitDuration(Duration.ZERO)
                                .build()),
                CircuitBreakingBackend.WhenOpen.WAIT);
    }

    /** Calls {@code t.start(0)} on this thread while another thread runs {@code rival} at the same moment. */
    private static boolean startRacing(DeviceTask t, Runnable rival) {
        CyclicBarrier bar = new CyclicBarrier(2);
        Thread other = new Thread(() -> {
            try {
                bar.await(1, TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // run anyway
            }
            rival.run();
        });
        other.start();
        try {
            bar.await(1, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // start anyway
        }
        boolean started = t.start(0);
        try {
            other.join(2000);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        return started;
    }
}
