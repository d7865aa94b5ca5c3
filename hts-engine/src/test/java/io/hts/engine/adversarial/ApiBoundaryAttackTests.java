package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.MaxRetriesExceededException;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.hts.engine.exec.ResourceUsage;
import io.hts.engine.fault.FaultTolerance;
import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import io.hts.engine.fault.internal.FaultResolution;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attacks on the API boundary of issue 14 item 1, through the public API only: the sealed
 * {@link RetrySpec} / {@link TimeLimitSpec} records made directly and used by the engine, the
 * sharing of Resilience4j instances between tasks, a user's {@link RetryConfig}, named instances
 * missing from registries, the {@link ResourceUsage} view, the thread-name prefix, and
 * {@link TaskBuilder#GPU_MEMORY}.
 */
class ApiBoundaryAttackTests {

    private static final Duration MAX = Duration.ofSeconds(20);

    // ================================================================== records made directly

    @Test
    void recordsMadeDirectlyRefuseNullsNamingTheComponent() {
        assertThatThrownBy(() -> new RetrySpec.FixedBackoff(1, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("backoff");
        assertThatThrownBy(() -> new RetrySpec.CustomBackoff(1, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("backoff");
        assertThatThrownBy(() -> new RetrySpec.Configured(null)).hasMessage("config");
        assertThatThrownBy(() -> new RetrySpec.Instance(null)).hasMessage("retry");
        assertThatThrownBy(() -> new TimeLimitSpec.Timeout(null)).hasMessage("timeout");
        assertThatThrownBy(() -> new TimeLimitSpec.Limiter(null)).hasMessage("limiter");
    }

    /** The Named records' NPE for a null name names the component too (the JDK's helpful message). */
    @Test
    void namedRecordsRefuseANullNameNamingIt() {
        assertThatThrownBy(() -> new RetrySpec.Named(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("instanceName");
        assertThatThrownBy(() -> new TimeLimitSpec.Named(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("instanceName");
    }

    @Test
    void extremesOfTheRecordsAreCheckedAtTheirEdges() {
        assertThat(new RetrySpec.Count(RetrySpec.MAXIMUM_RETRIES).retries()).isEqualTo(Integer.MAX_VALUE - 1);
        assertThatThrownBy(() -> new RetrySpec.Count(Integer.MAX_VALUE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetrySpec.Count(Integer.MIN_VALUE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetrySpec.CustomBackoff(0, a -> 1L)).hasMessageContaining("RetrySpec.none()");
        assertThat(new RetrySpec.FixedBackoff(1, RetrySpec.MAXIMUM_BACKOFF).backoff())
                .isEqualTo(Duration.ofDays(36_525));
        assertThatThrownBy(() -> new RetrySpec.FixedBackoff(1, RetrySpec.MAXIMUM_BACKOFF.plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetrySpec.FixedBackoff(1, Duration.ofSeconds(Long.MIN_VALUE)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new TimeLimitSpec.Timeout(TimeLimitSpec.MAXIMUM).timeout()).isEqualTo(TimeLimitSpec.MAXIMUM);
        assertThatThrownBy(() -> new TimeLimitSpec.Timeout(TimeLimitSpec.MAXIMUM.plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TimeLimitSpec.Timeout(Duration.ofNanos(999_999)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TimeLimitSpec.Timeout(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TimeLimitSpec.Timeout(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        // a configuration of one attempt is zero retries
        assertThat(new RetrySpec.Configured(RetryConfig.custom().maxAttempts(1).build()).retries())
                .isZero();
    }

    @Test
    void aNoneMadeDirectlyIsTheFactorysNone() {
        assertThat(new RetrySpec.None())
                .isEqualTo(RetrySpec.none())
                .hasSameHashCodeAs(RetrySpec.none())
                .hasToString("no retries");
        assertThat(new TimeLimitSpec.None()).isEqualTo(TimeLimitSpec.none()).hasSameHashCodeAs(TimeLimitSpec.none());
        assertThat(new TimeLimitSpec.None().isNone()).isTrue();
        assertThat(TimeLimitSpec.named("x").isNone()).isFalse();
    }

    /** Records made directly work as the scheduler's defaults (the only place a spec is handed over as such). */
    @Test
    void directlyMadeRecordsWorkAsTheSchedulersDefaults() throws Exception {
        FaultTolerance faults = FaultTolerance.builder()
                .defaultRetry(new RetrySpec.FixedBackoff(2, Duration.ZERO))
                .defaultTimeLimit(new TimeLimitSpec.None())
                .build();
        try (Scheduler s = Scheduler.builder().threads(2).faultTolerance(faults).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("direct-defaults");
            Task<Integer> t = g.task("flaky").cpu(ctx -> {
                if (calls.incrementAndGet() < 3) {
                    throw new IllegalStateException("not yet");
                }
                return 7;
            });
            assertThat(s.submit(g).await(MAX).result(t)).isEqualTo(7);
            assertThat(calls).hasValue(3);
        }
        FaultTolerance none =
                FaultTolerance.builder().defaultRetry(new RetrySpec.None()).build();
        try (Scheduler s = Scheduler.builder().threads(1).faultTolerance(none).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("direct-none");
            g.task("fails").cpu(ctx -> {
                calls.incrementAndGet();
                throw new IllegalStateException("once");
            });
            assertThatThrownBy(() -> s.submit(g).await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(calls).hasValue(1);
        }
    }

    // ================================================================== sharing of instances

    @Test
    void equalSpecsOnTasksOfDifferentNamesGetTheirOwnInstancesAndAGroupSharesOne() {
        IntervalFunction backoff = attempt -> 1L;
        Retry shared = Retry.of("shared", RetryConfig.custom().maxAttempts(2).build());
        RetryConfig config = RetryConfig.custom().maxAttempts(3).build();
        TaskGraph g = TaskGraph.named("sharing");
        Task<Integer> a = g.task("a").retries(2, backoff).cpu(ctx -> 1);
        Task<Integer> b = g.task("b").retries(2, backoff).cpu(ctx -> 1);
        Task<Integer> c = g.task("c").retry(shared).cpu(ctx -> 1);
        Task<Integer> d = g.task("d").retry(shared).cpu(ctx -> 1);
        Task<Integer> e = g.task("e").retry(config).cpu(ctx -> 1);
        Task<Integer> f = g.task("f").retry(config).cpu(ctx -> 1);
        TaskGroup<Integer> group =
                g.group("shard", 3, (i, t) -> t.retries(2, backoff).cpu(ctx -> i));
        TaskGroup<Integer> mixed =
                g.group("mixed", 2, (i, t) -> t.retries(i + 1).cpu(ctx -> i));

        FaultResolution r = new FaultResolution(FaultTolerance.defaults());
        Retry ra = r.retryFor(a);
        Retry rb = r.retryFor(b);
        assertThat(ra).isNotSameAs(rb);
        assertThat(ra.getName()).isEqualTo("a");
        assertThat(rb.getName()).isEqualTo("b");
        assertThat(ra.getRetryConfig().getMaxAttempts()).isEqualTo(3);
        assertThat(r.retryFor(c)).isSameAs(shared).isSameAs(r.retryFor(d));
        assertThat(r.retryFor(e)).isNotSameAs(r.retryFor(f));
        assertThat(r.retryFor(e).getRetryConfig().getMaxAttempts()).isEqualTo(3);
        List<Retry> members = group.members().stream().map(r::retryFor).toList();
        assertThat(members).allSatisfy(m -> assertThat(m).isSameAs(members.get(0)));
        assertThat(members.get(0).getName()).isEqualTo("shard");
        Retry m0 = r.retryFor(mixed.members().get(0));
        Retry m1 = r.retryFor(mixed.members().get(1));
        assertThat(m0).as("group members with different counts").isNotSameAs(m1);
        assertThat(m0.getRetryConfig().getMaxAttempts()).isEqualTo(2);
        assertThat(m1.getRetryConfig().getMaxAttempts()).isEqualTo(3);
        // a new resolution (another graph, or the same graph on another scheduler) shares nothing
        assertThat(new FaultResolution(FaultTolerance.defaults()).retryFor(a)).isNotSameAs(ra);
    }

    /** One backoff function shared by two tasks counts each task's attempts apart. */
    @Test
    void aSharedBackoffFunctionSeesEachTasksOwnAttemptNumbers() throws Exception {
        ConcurrentLinkedQueue<Integer> asked = new ConcurrentLinkedQueue<>();
        IntervalFunction backoff = attempt -> {
            asked.add(attempt);
            return 0L;
        };
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("shared-backoff");
            AtomicInteger x = new AtomicInteger();
            AtomicInteger y = new AtomicInteger();
            g.task("x").retries(2, backoff).cpu(ctx -> {
                if (x.incrementAndGet() < 3) {
                    throw new IllegalStateException("x");
                }
                return 1;
            });
            g.task("y").retries(2, backoff).cpu(ctx -> {
                if (y.incrementAndGet() < 3) {
                    throw new IllegalStateException("y");
                }
                return 1;
            });
            s.submit(g).await(MAX);
            assertThat(asked).containsExactlyInAnyOrder(1, 2, 1, 2);
        }
    }

    // ================================================================== a user's RetryConfig

    @Test
    void aRetryConfigRetriesOnlyTheExceptionsItNames() throws Exception {
        RetryConfig onlyIo = RetryConfig.custom()
                .maxAttempts(4)
                .waitDuration(Duration.ofMillis(1))
                .retryExceptions(IOException.class)
                .build();
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            AtomicInteger io = new AtomicInteger();
            AtomicInteger state = new AtomicInteger();
            TaskGraph g = TaskGraph.named("retry-config");
            g.task("io").retry(onlyIo).cpu(ctx -> {
                io.incrementAndGet();
                throw new IOException("disk");
            });
            g.task("state").retry(onlyIo).cpu(ctx -> {
                state.incrementAndGet();
                throw new IllegalStateException("bug");
            });
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThatThrownBy(() -> run.await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(io).as("IOException: every attempt").hasValue(4);
            assertThat(state).as("IllegalStateException: not retried").hasValue(1);
        }
    }

    /**
     * Resilience4j's {@code failAfterMaxAttempts(true)}: when the attempts run out and the result
     * is still one the retry retries on, the call fails with {@link MaxRetriesExceededException}.
     * HTS lets the last result stand and logs that the retry "threw when told of its success".
     */
    @Test
    void failAfterMaxAttemptsFailsTheTaskWhenTheLastResultIsStillRejected() throws Exception {
        RetryConfig config = RetryConfig.<Object>custom()
                .maxAttempts(3)
                .waitDuration(Duration.ofMillis(1))
                .retryOnResult(result -> "bad".equals(result))
                .failAfterMaxAttempts(true)
                .build();
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("fail-after-max");
            Task<String> t = g.task("always-bad").retry(config).cpu(ctx -> {
                calls.incrementAndGet();
                return "bad";
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(calls).hasValue(3);
            assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
            assertThat(run.error(t)).get().isInstanceOf(MaxRetriesExceededException.class);
        }
    }

    // ================================================================== backoffs that answer nonsense

    @ParameterizedTest(name = "answering {0}")
    @NullSource
    @ValueSource(longs = {-1L, Long.MIN_VALUE})
    void aCustomBackoffAnsweringNullOrNegativeFailsTheTaskNamingIt(Long answer) throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("bad-backoff");
            Task<Integer> t = g.task("t").retries(3, attempt -> answer).cpu(ctx -> {
                calls.incrementAndGet();
                throw new IllegalStateException("body");
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(calls).as("answer %s", answer).hasValue(1);
            Throwable error = run.error(t).orElseThrow();
            assertThat(error).hasMessage("body");
            assertThat(error.getSuppressed())
                    .as("answer %s", answer)
                    .anySatisfy(x ->
                            assertThat(x.getMessage()).contains("the backoff of task 't' returned " + answer + " ms"));
        }
    }

    /**
     * engine.md: the interval function inside a RetryConfig is Resilience4j's own, and its -1 ms
     * means "do not retry": the task ends after that attempt, with its body's error.
     */
    @Test
    void aRetryConfigBackoffAnsweringMinusOneIsResilience4jsNoRetry() throws Exception {
        RetryConfig config = RetryConfig.custom()
                .maxAttempts(3)
                .intervalFunction(attempt -> -1L)
                .build();
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("minus-one");
            Task<Integer> t = g.task("t").retry(config).cpu(ctx -> {
                calls.incrementAndGet();
                throw new IllegalStateException("body");
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(calls).hasValue(1);
            assertThat(run.error(t).orElseThrow()).hasMessage("body");
        }
    }

    @Test
    void aRetryConfigBackoffAnsweringMinusTwoIsRefusedNamingTheTask() throws Exception {
        RetryConfig config = RetryConfig.custom()
                .maxAttempts(3)
                .intervalFunction(attempt -> -2L)
                .build();
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("minus-two");
            Task<Integer> t = g.task("t").retry(config).cpu(ctx -> {
                throw new IllegalStateException("body");
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(run.error(t).orElseThrow().getSuppressed())
                    .anySatisfy(x -> assertThat(x.getMessage()).contains("'t'").contains("-2 ms"));
        }
    }

    /** A backoff of Long.MAX_VALUE ms parks the retry on the timer; cancelling the run ends it at once. */
    @Test
    void aRunWhoseRetryWaitsForeverIsCancelledPromptly() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("forever");
            Task<Integer> t = g.task("t").retries(1, attempt -> Long.MAX_VALUE).cpu(ctx -> {
                throw new IllegalStateException("body");
            });
            GraphRun run = s.submit(g);
            await().atMost(MAX).until(() -> run.state(t) == TaskState.RETRYING);
            assertThat(run.cancel()).isTrue();
            assertThatThrownBy(() -> run.await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
            assertThat(run.state(t)).isEqualTo(TaskState.CANCELLED);
        }
    }

    // ================================================================== named instances

    @Test
    void namedInstancesWithoutARegistryFailAtSubmissionNamingTaskAndInstance() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("no-registry");
            g.task("t").retry("typo").cpu(ctx -> 1);
            assertThatThrownBy(() -> s.submit(g))
                    .isInstanceOf(GraphValidationException.class)
                    .hasMessageContaining("'t'")
                    .hasMessageContaining("'typo'")
                    .hasMessageContaining("RetryRegistry");
            TaskGraph h = TaskGraph.named("no-limiter-registry");
            h.task("u").timeLimiter("slow").cpu(ctx -> 1);
            assertThatThrownBy(() -> s.submit(h))
                    .isInstanceOf(GraphValidationException.class)
                    .hasMessageContaining("'u'")
                    .hasMessageContaining("'slow'")
                    .hasMessageContaining("TimeLimiterRegistry");
        }
    }

    /**
     * FaultResolution#retryFor: "@throws GraphValidationException when it names an
     * instance no registry provides". With a registry that has neither the instance nor a
     * configuration of that name, a typo silently gets Resilience4j's defaults (3 attempts, 500 ms
     * apart; a time limiter of 1 s) and a new instance is added to the application's registry.
     */
    @Test
    void anInstanceNameTheRegistryDoesNotHaveIsRefused() throws Exception {
        RetryRegistry retries = RetryRegistry.ofDefaults();
        TimeLimiterRegistry limiters = TimeLimiterRegistry.ofDefaults();
        FaultTolerance faults = FaultTolerance.builder()
                .retryRegistry(retries)
                .timeLimiterRegistry(limiters)
                .build();
        try (Scheduler s = Scheduler.builder().threads(1).faultTolerance(faults).build()) {
            TaskGraph g = TaskGraph.named("typo");
            g.task("t").retry("hts-cpuu").cpu(ctx -> 1);
            assertThatThrownBy(() -> s.submit(g).await(MAX))
                    .isInstanceOf(GraphValidationException.class)
                    .hasMessageContaining("hts-cpuu");
            assertThat(retries.find("hts-cpuu"))
                    .as("nothing added to the application's registry")
                    .isEmpty();
            TaskGraph h = TaskGraph.named("typo-limiter");
            h.task("u").timeLimiter("slow-opps").cpu(ctx -> 1);
            assertThatThrownBy(() -> s.submit(h).await(MAX))
                    .isInstanceOf(GraphValidationException.class)
                    .hasMessageContaining("slow-opps");
        }
    }

    @Test
    void aRegistryConfigurationOfTheNameIsUsedForTheNamedInstance() throws Exception {
        RetryRegistry retries = RetryRegistry.ofDefaults();
        retries.addConfiguration(
                "twice",
                RetryConfig.custom()
                        .maxAttempts(2)
                        .waitDuration(Duration.ofMillis(1))
                        .build());
        FaultTolerance faults = FaultTolerance.builder().retryRegistry(retries).build();
        try (Scheduler s = Scheduler.builder().threads(1).faultTolerance(faults).build()) {
            AtomicInteger calls = new AtomicInteger();
            TaskGraph g = TaskGraph.named("by-config");
            g.task("t").retry("twice").cpu(ctx -> {
                calls.incrementAndGet();
                throw new IllegalStateException("fails");
            });
            assertThatThrownBy(() -> s.submit(g).await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(calls).hasValue(2);
        }
    }

    // ================================================================== ResourceUsage

    @Test
    void resourceUsageNamesTheKnownResourcesForAnUnknownOne() {
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .resource("io", 2)
                .resource(TaskBuilder.GPU_MEMORY, 1024)
                .build()) {
            ResourceUsage r = s.resources();
            assertThat(r.names()).containsExactly("io", "gpu-memory");
            assertThatThrownBy(() -> r.names().add("x")).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> r.available("disk"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'disk'")
                    .hasMessageContaining("io")
                    .hasMessageContaining("gpu-memory");
            assertThatThrownBy(() -> r.capacity("IO"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("[io, gpu-memory]");
            assertThatThrownBy(() -> r.capacity(null)).isInstanceOf(RuntimeException.class);
            assertThat(r.capacity("gpu-memory")).isEqualTo(1024);
            assertThat(r.waiting()).isZero();
        }
        try (Scheduler s = Scheduler.create()) {
            assertThat(s.resources().names()).isEmpty();
            assertThatThrownBy(() -> s.resources().available("io")).hasMessageContaining("configured resources: []");
        }
    }

    @Test
    void resourceUsageFollowsHoldsWaitsCancelsAndTimeOuts() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).resource("io", 1).build()) {
            ResourceUsage r = s.resources();
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("holds");
            Task<Integer> holder = g.task("holder").resource("io", 1).cpu(ctx -> {
                holding.countDown();
                release.await(20, TimeUnit.SECONDS);
                return 1;
            });
            Task<Integer> waiter = g.task("waiter").resource("io", 1).cpu(ctx -> 2);
            GraphRun run = s.submit(g);
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(r.available("io")).isZero();
            await().atMost(MAX).until(() -> r.waiting() == 1);
            assertThat(run.cancel(waiter)).isTrue();
            await().atMost(MAX).until(() -> r.waiting() == 0);
            assertThat(r.available("io")).as("the holder still holds it").isZero();
            release.countDown();
            assertThatThrownBy(() -> run.await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(run.state(holder)).isEqualTo(TaskState.SUCCEEDED);
            await().atMost(MAX).until(() -> r.available("io") == 1);

            // a timed-out body that ignores its interrupt keeps what it holds until it returns (engine.md)
            CountDownLatch stuck = new CountDownLatch(1);
            CountDownLatch started = new CountDownLatch(1);
            TaskGraph t = TaskGraph.named("timed-out");
            Task<Integer> slow = t.task("slow")
                    .resource("io", 1)
                    .timeout(Duration.ofMillis(20))
                    .cpu(ctx -> {
                        started.countDown();
                        while (true) {
                            try {
                                if (stuck.await(20, TimeUnit.SECONDS)) {
                                    return 1;
                                }
                            } catch (InterruptedException ignored) {
                                // keeps going, as a body that ignores interrupts does
                            }
                        }
                    });
            GraphRun timed = s.submit(t);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> timed.await(MAX)).isInstanceOf(GraphRunException.class);
            assertThat(timed.state(slow)).isEqualTo(TaskState.FAILED);
            assertThat(r.available("io")).as("held by the abandoned body").isZero();
            stuck.countDown();
            await().atMost(MAX).until(() -> r.available("io") == 1);
        }
    }

    /** A CPU body never holds the GPU memory its task declares; only a GPU placement does. */
    @Test
    void aCpuBodyDoesNotHoldTheGpuMemoryItsTaskDeclares() throws Exception {
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .resource(TaskBuilder.GPU_MEMORY, 100)
                .resource("io", 1)
                .build()) {
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("cpu-with-gpu-memory");
            g.task("t").resource(TaskBuilder.GPU_MEMORY, 60).resource("io", 1).cpu(ctx -> {
                running.countDown();
                release.await(20, TimeUnit.SECONDS);
                return 1;
            });
            GraphRun run = s.submit(g);
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(s.resources().available("io")).isZero();
            assertThat(s.resources().available(TaskBuilder.GPU_MEMORY)).isEqualTo(100);
            release.countDown();
            run.await(MAX);
        }
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("no-gpu-memory-resource");
            g.task("t").resource(TaskBuilder.GPU_MEMORY, 1).cpu(ctx -> 1);
            assertThatThrownBy(() -> s.submit(g))
                    .hasMessageContaining("'gpu-memory'")
                    .hasMessageContaining("configured resources: []");
        }
    }

    /**
     * ResourceUsage's Javadoc: "A read-only view of a scheduler's named resources", and the commit:
     * "Scheduler.resources() hands out a ResourceUsage view instead of the limiter". It is the
     * limiter itself: on the class path (Spring Boot's), a cast gives any caller acquire and
     * release on the scheduler's capacity.
     */
    @Test
    void resourcesIsAViewThatCannotBeCastToTheLimiter() {
        try (Scheduler s = Scheduler.builder().threads(1).resource("io", 1).build()) {
            ResourceUsage usage = s.resources();
            assertThat(usage).isNotInstanceOf(io.hts.engine.exec.internal.ResourceLimiter.class);
            assertThat(usage.available("io")).isEqualTo(1);
        }
    }

    // ================================================================== thread names

    @Test
    void thePrefixReachesWorkersSparesTheTimerAndTheDeviceCloser() throws Exception {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        FakeGpuBackend gpu = new FakeGpuBackend(1);
        ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
        Scheduler s = Scheduler.builder()
                .threads(1)
                .threadNamePrefix("acme-")
                .gpuBackend(gpu)
                .listener(e -> seen.add(Thread.currentThread().getName()))
                .build();
        try {
            // 40 levels of nested runs on one worker: past 32 nested waits a spare worker runs the rest
            assertThat(s.submit(nested(40, seen)).await(MAX).status()).isEqualTo(RunStatus.SUCCEEDED);
            // a retry after a backoff and a time-out: both go through the timer
            TaskGraph g = TaskGraph.named("timer");
            AtomicInteger calls = new AtomicInteger();
            g.task("retry").retries(1, Duration.ofMillis(1)).cpu(ctx -> {
                if (calls.incrementAndGet() == 1) {
                    throw new IllegalStateException("once");
                }
                return 1;
            });
            s.submit(g).await(MAX);
            Set<String> created = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> !before.contains(t))
                    .map(Thread::getName)
                    .filter(n -> !n.startsWith("fake-gpu"))
                    .collect(Collectors.toSet());
            assertThat(created).isNotEmpty().allSatisfy(n -> assertThat(n).startsWith("acme-"));
            assertThat(created).contains("acme-0", "acme-timer");
            assertThat(seen).allSatisfy(n -> assertThat(n).matches("acme-.*|main|Test worker|.*junit.*|fake-gpu.*"));
            assertThat(seen).anySatisfy(n -> assertThat(n).startsWith("acme-spare-"));
        } finally {
            s.close();
        }
        assertThat(gpu.closedOn()).isEqualTo("acme-close-devices");
    }

    private static TaskGraph nested(int depth, ConcurrentLinkedQueue<String> seen) {
        TaskGraph g = TaskGraph.named("nested-" + depth);
        g.task("level").cpu(ctx -> {
            seen.add(Thread.currentThread().getName());
            return depth > 1 ? ctx.execute(nested(depth - 1, seen)).status() : null;
        });
        return g;
    }

    @Test
    void theDefaultPrefixIsTheDocumentedOne() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("name");
            Task<String> t = g.task("t").cpu(ctx -> Thread.currentThread().getName());
            assertThat(s.submit(g).await(MAX).result(t)).isEqualTo("hts-worker-0");
        }
    }

    @Test
    void poolOptionsAreCheckedWithTheirRangesNamed() {
        assertThatThrownBy(() -> Scheduler.builder().threads(0)).hasMessageContaining("between 1 and 65534");
        assertThatThrownBy(() -> Scheduler.builder().threads(65_535)).hasMessageContaining("was 65535");
        assertThatThrownBy(() -> Scheduler.builder().spinsBeforePark(-1)).hasMessageContaining("0 or more");
        assertThatThrownBy(() -> Scheduler.builder().threadNamePrefix(null)).isInstanceOf(NullPointerException.class);
        try (Scheduler s = Scheduler.builder().threads(1).spinsBeforePark(0).build()) {
            TaskGraph g = TaskGraph.named("no-spin");
            Task<Integer> t = g.task("t").cpu(ctx -> 3);
            assertThat(s.execute(g).result(t)).isEqualTo(3);
        }
    }

    // ================================================================== messages

    @Test
    void aLimiterOutOfRangeIsRefusedAtSubmissionNamingLimiterAndTask() throws Exception {
        io.github.resilience4j.timelimiter.TimeLimiter forever = io.github.resilience4j.timelimiter.TimeLimiter.of(
                "forever",
                io.github.resilience4j.timelimiter.TimeLimiterConfig.custom()
                        .timeoutDuration(Duration.ofDays(365L * 200))
                        .build());
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("limiter-range");
            g.task("t").timeout(forever).cpu(ctx -> 1);
            assertThatThrownBy(() -> s.submit(g))
                    .isInstanceOf(GraphValidationException.class)
                    .hasMessageContaining("'t'")
                    .hasMessageContaining("'forever'")
                    .hasMessageContaining("36525 days");
        }
    }

    @Test
    void theRetryingEventSaysTheWaitInMilliseconds() throws Exception {
        List<String> details = new ArrayList<>();
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .listener(e -> {
                    if (e.type() == EventType.TASK_RETRYING) {
                        synchronized (details) {
                            details.add(e.detail());
                        }
                    }
                })
                .build()) {
            TaskGraph g = TaskGraph.named("detail");
            AtomicInteger calls = new AtomicInteger();
            g.task("t").retries(1, Duration.ofMillis(3)).cpu(ctx -> {
                if (calls.incrementAndGet() == 1) {
                    throw new IllegalStateException("x");
                }
                return 1;
            });
            s.submit(g).await(MAX);
        }
        synchronized (details) {
            assertThat(details).singleElement().asString().contains("attempt 2 in 3 ms");
        }
    }
}
