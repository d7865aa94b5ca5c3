package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.hts.engine.fault.FaultTolerance;
import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.support.Blocking;
import io.hts.engine.support.Ended;
import io.hts.engine.support.FakeGpuBackend;
import io.hts.engine.support.RecordingListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class FaultToleranceTests {

    @Test
    void aRetrySucceedsOnTheThirdAttemptAndTheEventsShowTwoRetrying() {
        RecordingListener events = new RecordingListener();
        try (Scheduler scheduler =
                Scheduler.builder().threads(2).listener(events).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("flaky");
            Task<String> flaky = g.task("flaky")
                    .retries(3, Duration.ofMillis(5))
                    .cpu(ctx -> {
                        if (calls.incrementAndGet() < 3) {
                            throw new IllegalStateException("transient " + ctx.attempt());
                        }
                        return "ok on attempt " + ctx.attempt();
                    });
            GraphRun run = scheduler.execute(g);
            assertThat(run.result(flaky)).isEqualTo("ok on attempt 3");
            assertThat(events.types("flaky"))
                    .filteredOn(t -> t == EventType.TASK_RETRYING)
                    .hasSize(2);
            assertThat(events.types("flaky"))
                    .containsSubsequence(
                            EventType.TASK_STARTED,
                            EventType.TASK_RETRYING,
                            EventType.TASK_READY,
                            EventType.TASK_STARTED,
                            EventType.TASK_RETRYING,
                            EventType.TASK_READY,
                            EventType.TASK_STARTED,
                            EventType.TASK_SUCCEEDED);
            assertThat(run.profile().timing(flaky.index()).attempts()).isEqualTo(3);
        }
    }

    /** Tasks that declare nothing retry by the device's default: named instances per device, as Spring's hts-cpu / hts-gpu. */
    @Test
    void defaultRetriesAndTimeLimitsMayDifferByDevice() {
        RetryRegistry registry = RetryRegistry.ofDefaults();
        registry.retry(
                "hts-cpu",
                RetryConfig.custom()
                        .maxAttempts(2)
                        .waitDuration(Duration.ofMillis(1))
                        .failAfterMaxAttempts(false)
                        .build());
        registry.retry(
                "hts-gpu",
                RetryConfig.custom()
                        .maxAttempts(4)
                        .waitDuration(Duration.ofMillis(1))
                        .failAfterMaxAttempts(false)
                        .build());
        FaultTolerance faults = FaultTolerance.builder()
                .retryRegistry(registry)
                .defaultRetry(RetrySpec.named("hts-cpu"))
                .gpuDefaultRetry(RetrySpec.named("hts-gpu"))
                .gpuDefaultTimeLimit(TimeLimitSpec.of(Duration.ofMillis(50)))
                .build();
        assertThat(faults.defaultRetry(Device.GPU)).isEqualTo(RetrySpec.named("hts-gpu"));
        assertThat(faults.defaultTimeLimit(Device.CPU).isNone()).isTrue();
        FakeGpuBackend gpu = new FakeGpuBackend(1);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .faultTolerance(faults)
                .gpuBackend(gpu)
                .policy(new GpuFirstPolicy())
                .build()) {
            AtomicInteger cpuCalls = new AtomicInteger();
            AtomicInteger gpuCalls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("per-device");
            g.task("on-cpu").cpu(ctx -> {
                cpuCalls.incrementAndGet();
                throw new IllegalStateException("cpu fails");
            });
            g.task("on-gpu").gpu(ctx -> {
                gpuCalls.incrementAndGet();
                throw new IllegalStateException("gpu fails");
            });
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            assertThat(cpuCalls).as("hts-cpu: 2 attempts").hasValue(2);
            assertThat(gpuCalls).as("hts-gpu: 4 attempts").hasValue(4);
            TaskGraph slow = TaskGraph.named("gpu-time-limit");
            CountDownLatch release = new CountDownLatch(1);
            Task<String> hang = slow.task("hang").retries(0).gpu(ctx -> {
                release.await(10, TimeUnit.SECONDS);
                return "late";
            });
            GraphRun timed = s.submit(slow);
            assertThatThrownBy(timed::await)
                    .isInstanceOf(GraphRunException.class)
                    .hasStackTraceContaining("exceeded its time limit of 50 ms");
            release.countDown();
            assertThat(timed.state(hang)).isEqualTo(TaskState.FAILED);
        }
    }

    @Test
    void retriesNeverSleepOnAWorker() throws Exception {
        try (Scheduler scheduler = Scheduler.builder().threads(1).build()) {
            AtomicInteger calls = new AtomicInteger();
            CountDownLatch otherRan = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("backoff");
            // a backoff no test outlives: the task is RETRYING for as long as the test looks
            g.task("slow-retry").retries(1, Duration.ofHours(1)).cpu(ctx -> {
                if (calls.incrementAndGet() == 1) {
                    throw new IllegalStateException("first");
                }
                return null;
            });
            GraphRun run = scheduler.submit(g);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> run.state(g.find("slow-retry").orElseThrow()) == TaskState.RETRYING);
            TaskGraph other = TaskGraph.named("other");
            other.task("meanwhile").cpu(ctx -> {
                otherRan.countDown();
                return null;
            });
            scheduler.submit(other);
            assertThat(otherRan.await(10, TimeUnit.SECONDS))
                    .as("the only worker is free during the backoff")
                    .isTrue();
            assertThat(run.state(g.find("slow-retry").orElseThrow())).isEqualTo(TaskState.RETRYING);
            assertThat(calls).as("no second attempt before the backoff passed").hasValue(1);
            run.cancel();
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            assertThat(run.state(g.find("slow-retry").orElseThrow()))
                    .as("a cancel ends the wait")
                    .isEqualTo(TaskState.CANCELLED);
        }
    }

    @Test
    void exhaustedRetriesFailTheTaskWithTheLastError() {
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("hopeless");
            Task<Object> t = g.task("t")
                    .retries(2, IntervalFunction.ofExponentialBackoff(1, 2))
                    .cpu(ctx -> {
                        throw new IllegalStateException("attempt " + ctx.attempt());
                    });
            GraphRun run = scheduler.submit(g);
            assertThatThrownBy(run::await)
                    .isInstanceOfSatisfying(
                            GraphRunException.class,
                            ex -> assertThat(ex.failures()).singleElement().satisfies(f -> {
                                assertThat(f.attempts()).isEqualTo(3);
                                assertThat(f.error()).hasMessage("attempt 3");
                            }))
                    .hasMessageContaining("after 3 attempts");
            assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
        }
    }

    @Test
    void retryConfigDecidesWhichExceptionsRetry() {
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("selective");
            g.task("t")
                    .retry(RetryConfig.custom()
                            .maxAttempts(5)
                            .waitDuration(Duration.ofMillis(1))
                            .ignoreExceptions(IllegalArgumentException.class)
                            .build())
                    .cpu(ctx -> {
                        calls.incrementAndGet();
                        throw new IllegalArgumentException("not retryable");
                    });
            assertThatThrownBy(() -> scheduler.execute(g)).isInstanceOf(GraphRunException.class);
            assertThat(calls.get()).isOne();
        }
    }

    @Test
    void namedRetriesAndTimeLimitersComeFromTheRegistries() {
        RetryRegistry retries = RetryRegistry.of(Map.of(
                "hts-cpu",
                RetryConfig.custom()
                        .maxAttempts(4)
                        .waitDuration(Duration.ofMillis(1))
                        .build()));
        retries.retry("hts-cpu", "hts-cpu");
        TimeLimiterRegistry limiters = TimeLimiterRegistry.of(Map.of(
                "quick",
                TimeLimiterConfig.custom()
                        .timeoutDuration(Duration.ofMillis(50))
                        .build()));
        limiters.timeLimiter("quick", "quick");
        FaultTolerance faults = FaultTolerance.builder()
                .retryRegistry(retries)
                .timeLimiterRegistry(limiters)
                .defaultRetry(RetrySpec.named("hts-cpu"))
                .build();
        try (Scheduler scheduler =
                Scheduler.builder().threads(2).faultTolerance(faults).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("registry");
            Task<Integer> t = g.task("t").cpu(ctx -> {
                if (calls.incrementAndGet() < 4) {
                    throw new IllegalStateException("again");
                }
                return ctx.attempt();
            });
            assertThat(scheduler.execute(g).result(t)).isEqualTo(4);
            assertThat(retries.retry("hts-cpu").getMetrics().getNumberOfSuccessfulCallsWithRetryAttempt())
                    .isOne();

            TaskGraph slow = TaskGraph.named("limited");
            slow.task("sleepy").timeLimiter("quick").retries(0).cpu(ctx -> {
                Blocking.untilInterrupted(Duration.ofSeconds(10));
                return null;
            });
            assertThatThrownBy(() -> scheduler.execute(slow))
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(TimeoutException.class);
        }
    }

    @Test
    void aNamedInstanceWithoutARegistryIsAValidationError() {
        try (Scheduler scheduler = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("g");
            g.task("t").retry("hts-gpu").cpu(ctx -> 1);
            assertThatThrownBy(() -> scheduler.submit(g))
                    .isInstanceOf(GraphValidationException.class)
                    .hasMessageContaining("task 't'")
                    .hasMessageContaining("retry instance 'hts-gpu'")
                    .hasMessageContaining("no RetryRegistry");
        }
    }

    @Test
    void aTimeoutFailsTheTaskInterruptsItsBodyCancelsDescendantsAndRecordsItAsAbandonedUntilItReturns()
            throws Exception {
        RecordingListener events = new RecordingListener();
        try (Scheduler scheduler =
                Scheduler.builder().threads(2).listener(events).build()) {
            CountDownLatch interrupted = new CountDownLatch(1);
            CountDownLatch mayReturn = new CountDownLatch(1);
            AtomicBoolean sawCancelled = new AtomicBoolean();
            TaskGraph g = TaskGraph.named("timeouts");
            Task<Object> slow = g.task("slow").timeout(Duration.ofMillis(100)).cpu(ctx -> {
                try {
                    Blocking.untilInterrupted(Duration.ofSeconds(30));
                } catch (InterruptedException ex) {
                    sawCancelled.set(ctx.isCancelled());
                    interrupted.countDown();
                    // a stubborn body: it goes on after the interrupt, holding its slot
                    mayReturn.await();
                }
                return "too late";
            });
            Task<Object> child = g.task("child").after(slow).cpu(ctx -> "never");
            GraphRun run = scheduler.submit(g);
            try {
                assertTimedOut(run, slow, child, interrupted, sawCancelled, mayReturn, events);
            } finally {
                mayReturn.countDown();
            }
        }
    }

    private static void assertTimedOut(
            GraphRun run,
            Task<Object> slow,
            Task<Object> child,
            CountDownLatch interrupted,
            AtomicBoolean sawCancelled,
            CountDownLatch mayReturn,
            RecordingListener events)
            throws Exception {
        {
            assertThatThrownBy(run::await)
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(TimeoutException.class)
                    .rootCause()
                    .hasMessageContaining("task 'slow'")
                    .hasMessageContaining("time limit");
            assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(sawCancelled).isTrue();
            assertThat(run.state(slow)).isEqualTo(TaskState.FAILED);
            assertThat(run.state(child)).isEqualTo(TaskState.CANCELLED);
            assertThat(run.abandoned()).containsExactly("slow");
            assertThat(run.profile().abandoned()).containsExactly("slow");
            mayReturn.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> run.abandoned().isEmpty());
            assertThat(events.types("slow"))
                    .contains(EventType.TASK_TIMED_OUT, EventType.TASK_FAILED, EventType.TASK_ABANDONED_RETURNED);
            assertThat(run.state(slow)).as("the late return changes nothing").isEqualTo(TaskState.FAILED);
        }
    }

    @Test
    void aTimedOutAttemptCanBeRetried() {
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("retry-timeout");
            Task<Integer> t = g.task("t")
                    .timeout(Duration.ofMillis(50))
                    .retries(2, Duration.ofMillis(1))
                    .cpu(ctx -> {
                        if (ctx.attempt() == 1) {
                            Blocking.untilInterrupted(Duration.ofSeconds(5));
                        }
                        return ctx.attempt();
                    });
            assertThat(scheduler.execute(g).result(t)).isEqualTo(2);
        }
    }

    @Test
    void schedulerDefaultsApplyToTasksThatDeclareNothing() throws Exception {
        FaultTolerance faults = FaultTolerance.builder()
                .defaultRetry(RetrySpec.retries(1, Duration.ZERO))
                .defaultTimeLimit(TimeLimitSpec.of(Duration.ofMillis(100)))
                .build();
        try (Scheduler scheduler =
                Scheduler.builder().threads(3).faultTolerance(faults).build()) {
            AtomicInteger calls = new AtomicInteger();
            AtomicInteger slowAttempts = new AtomicInteger();
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("defaults");
            Task<Integer> t = g.task("t")
                    .cpu(
                            ctx -> { // the default retry: a second attempt
                                if (calls.incrementAndGet() == 1) {
                                    throw new IllegalStateException("once");
                                }
                                return ctx.attempt();
                            });
            Task<Integer> slow = g.task("slow")
                    .cpu(
                            ctx -> { // the default time limit, and its retry
                                slowAttempts.incrementAndGet();
                                new CountDownLatch(1).await(); // ends only by the time-out's interrupt
                                return 0;
                            });
            Task<Integer> free = g.task("free").noTimeout().retries(0).cpu(ctx -> {
                release.await(); // released only after "slow" timed out twice: well past the default limit
                return 7;
            });
            GraphRun run = scheduler.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThat(run.whenDone(slow))
                    .failsWithin(Duration.ofSeconds(10))
                    .withThrowableThat()
                    .havingRootCause()
                    .isInstanceOf(TimeoutException.class);
            release.countDown();
            GraphRunException failure = Ended.failure(run, Duration.ofSeconds(10));
            assertThat(failure).isNotNull();
            assertThat(failure.failures())
                    .singleElement()
                    .satisfies(f -> assertThat(f.taskName()).isEqualTo("slow"));
            assertThat(slowAttempts)
                    .as("the default retry gave the timed-out task a second attempt")
                    .hasValue(2);
            assertThat(run.result(t)).isEqualTo(2);
            assertThat(run.result(free))
                    .as("a task that opts out runs past the default limit")
                    .isEqualTo(7);
        }
    }

    @Test
    void cancellingARunMidwayStopsNewStartsInterruptsBodiesAndReportsEveryFinalState() throws Exception {
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            CountDownLatch running = new CountDownLatch(2);
            TaskGraph g = TaskGraph.named("cancel-me");
            Task<Integer> first = g.task("first").cpu(ctx -> 1);
            Task<Object> a = g.task("a").after(first).cpu(ctx -> {
                running.countDown();
                Blocking.untilInterrupted(Duration.ofSeconds(30));
                return null;
            });
            Task<Object> b = g.task("b").after(first).cpu(ctx -> {
                running.countDown();
                while (!ctx.isCancelled()) {
                    Thread.onSpinWait();
                }
                return "saw cancel";
            });
            Task<Object> later = g.task("later").after(a, b).cpu(ctx -> null);
            GraphRun run = scheduler.submit(g);
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(run.cancel()).isTrue();
            assertThat(run.cancel()).as("only once").isFalse();
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(30)))
                    .isInstanceOfSatisfying(
                            GraphRunException.class,
                            ex -> assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED))
                    .hasMessageContaining("was cancelled");
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(run.state(first)).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.state(a)).as("interrupted").isEqualTo(TaskState.CANCELLED);
            assertThat(run.state(b))
                    .as("returned normally after seeing the cancel")
                    .isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.state(later)).isEqualTo(TaskState.CANCELLED);
            assertThat(run.states().values()).allMatch(TaskState::isTerminal);
        }
    }

    @Test
    void cancellingOneTaskCancelsItsDescendantsOnlyAndAGroupCancelsAsOne() throws Exception {
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("partial");
            Task<Object> gate = g.task("gate").cpu(ctx -> release.await(30, TimeUnit.SECONDS));
            Task<Integer> doomed = g.task("doomed").after(gate).cpu(ctx -> 1);
            Task<Integer> doomedChild = g.task("doomed-child").after(doomed).cpu(ctx -> 2);
            var shards = g.group("shard", 4, (i, t) -> t.after(gate).cpu(ctx -> i));
            Task<Integer> independent = g.task("independent").after(gate).cpu(ctx -> 3);
            GraphRun run = scheduler.submit(g);
            assertThat(run.cancel(doomed)).isTrue();
            assertThat(run.cancel(shards)).isTrue();
            release.countDown();
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(run.state(doomed)).isEqualTo(TaskState.CANCELLED);
            assertThat(run.state(doomedChild)).isEqualTo(TaskState.CANCELLED);
            assertThat(shards.members()).allMatch(t -> run.state(t) == TaskState.CANCELLED);
            assertThat(run.result(independent)).isEqualTo(3);
        }
    }

    @ParameterizedTest
    @EnumSource(FailureMode.class)
    void failFastCancelsEverythingNotStartedWhileContinueLetsIndependentBranchesFinish(FailureMode mode)
            throws Exception {
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            CountDownLatch failed = new CountDownLatch(1);
            CountDownLatch slowStarted = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("modes");
            Task<Object> bad = g.task("bad").cpu(ctx -> {
                slowStarted.await(10, TimeUnit.SECONDS);
                throw new IllegalStateException("bad");
            });
            Task<Object> badChild = g.task("bad-child").after(bad).cpu(ctx -> null);
            Task<Object> slowRoot = g.task("slow-root").cpu(ctx -> {
                slowStarted.countDown();
                failed.await(10, TimeUnit.SECONDS);
                return null;
            });
            Task<String> branch = g.task("branch").after(slowRoot).cpu(ctx -> "finished");
            RecordingListenerLatch latch = new RecordingListenerLatch(failed);
            scheduler.addListener(latch);
            GraphRun run = scheduler.submit(g, RunOptions.failureMode(mode));
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class).hasRootCauseMessage("bad");
            assertThat(run.state(bad)).isEqualTo(TaskState.FAILED);
            assertThat(run.state(badChild)).isEqualTo(TaskState.CANCELLED);
            assertThat(run.state(slowRoot)).as("already running: it finishes").isEqualTo(TaskState.SUCCEEDED);
            if (mode == FailureMode.FAIL_FAST) {
                assertThat(run.state(branch)).isEqualTo(TaskState.CANCELLED);
            } else {
                assertThat(run.result(branch)).isEqualTo("finished");
            }
            assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        }
    }

    @Test
    void theRunExceptionNamesEveryFailedTaskWithTheFirstAsCause() {
        try (Scheduler scheduler =
                Scheduler.builder().threads(2).failureMode(FailureMode.CONTINUE).build()) {
            TaskGraph g = TaskGraph.named("many-failures");
            for (String name : List.of("x", "y", "z")) {
                g.task(name).cpu(ctx -> {
                    throw new IllegalStateException(name + " broke");
                });
            }
            g.task("fine").cpu(ctx -> 1);
            GraphRun run = scheduler.submit(g);
            assertThatThrownBy(run::await)
                    .isInstanceOfSatisfying(GraphRunException.class, ex -> {
                        assertThat(ex.failures())
                                .extracting(TaskFailure::taskName)
                                .containsExactlyInAnyOrder("x", "y", "z");
                        assertThat(ex.getCause()).isSameAs(ex.failures().get(0).error());
                        assertThat(ex.getSuppressed()).hasSize(2);
                    })
                    .hasMessageContaining("3 tasks failed")
                    .hasMessageContaining("x broke")
                    .hasMessageContaining("y broke")
                    .hasMessageContaining("z broke");
        }
    }

    /** Opens a latch when a task fails, so a slow root finishes after the failure. */
    private record RecordingListenerLatch(CountDownLatch latch) implements io.hts.engine.observe.TaskListener {
        @Override
        public void onEvent(TaskEvent event) {
            if (event.type() == EventType.TASK_FAILED) {
                latch.countDown();
            }
        }

        @Override
        public boolean wantsRoutineEvents() {
            return false;
        }
    }

    @Test
    void aRetryThatRetriesOnSomeResultsRunsTheTaskAgainUntilTheResultIsAccepted() {
        AtomicInteger attempts = new AtomicInteger();
        RetryConfig polling = RetryConfig.<Object>custom()
                .maxAttempts(5)
                .waitDuration(Duration.ofMillis(1))
                .retryOnResult(r -> "not yet".equals(r))
                .build();
        TaskGraph g = TaskGraph.named("poll");
        Task<String> poll =
                g.task("poll").retry(polling).cpu(ctx -> attempts.incrementAndGet() < 3 ? "not yet" : "ready");
        Task<String> use = g.task("use").after(poll).cpu(ctx -> "used " + ctx.input(poll));
        RecordingListener events = new RecordingListener();
        try (Scheduler s = Scheduler.builder().threads(2).listener(events).build()) {
            GraphRun run = s.execute(g);
            assertThat(run.result(use)).isEqualTo("used ready");
            assertThat(attempts).hasValue(3);
            assertThat(events.events(e -> e.type() == EventType.TASK_RETRYING))
                    .hasSize(2)
                    .allSatisfy(e -> assertThat(e.detail()).contains("its result is retried on"));
        }
    }

    @Test
    void whenTheAttemptsRunOutTheLastResultStands() {
        AtomicInteger attempts = new AtomicInteger();
        RetryConfig polling = RetryConfig.<Object>custom()
                .maxAttempts(2)
                .waitDuration(Duration.ofMillis(1))
                .retryOnResult(r -> true)
                .build();
        TaskGraph g = TaskGraph.named("poll");
        Task<Integer> poll = g.task("poll").retry(polling).cpu(ctx -> attempts.incrementAndGet());
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            assertThat(s.execute(g).result(poll)).isEqualTo(2);
        }
    }
}
