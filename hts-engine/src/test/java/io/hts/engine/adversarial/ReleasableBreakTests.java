package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.graph.Releasable;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ReleasableBreakTests {

    static final Duration MAX = Duration.ofSeconds(20);

    /** Records reads after release. */
    static final class Buffer implements Releasable {
        final AtomicInteger releases = new AtomicInteger();
        final ConcurrentLinkedQueue<String> violations;
        final boolean throwOnRelease;

        Buffer(ConcurrentLinkedQueue<String> violations, boolean throwOnRelease) {
            this.violations = violations;
            this.throwOnRelease = throwOnRelease;
        }

        /** Reads for a while; records a violation when released meanwhile. */
        int read(String who, long millis) {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            do {
                if (releases.get() > 0) {
                    violations.add(who + " read a released buffer");
                    return -1;
                }
                Thread.onSpinWait();
            } while (System.nanoTime() < until);
            return 1;
        }

        @Override
        public void release() {
            releases.incrementAndGet();
            if (throwOnRelease) {
                throw new IllegalStateException("release exploded");
            }
        }
    }

    static Scheduler scheduler() {
        return Scheduler.builder()
                .threads(2)
                .gpuBackend(ScriptedBackend.wellBehaved())
                .build();
    }

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(3));
    }

    @Test
    void aResultIsNotReleasedBetweenTheAttemptsOfARetryingConsumer() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = scheduler();
            try {
                for (int k = 0; k < 5; k++) {
                    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
                    TaskGraph g = TaskGraph.named("retrying-consumer-" + k);
                    Task<Buffer> produce = g.task("produce").gpu(ctx -> new Buffer(violations, false));
                    Task<Integer> consume = g.task("consume")
                            .after(produce)
                            .retries(2, Duration.ofMillis(30))
                            .cpu(ctx -> {
                                int v = ctx.input(produce).read("consume#" + ctx.attempt(), 5);
                                if (ctx.attempt() < 3) {
                                    throw new IllegalStateException("transient");
                                }
                                return v;
                            });
                    GraphRun run = s.submit(g);
                    assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                    assertThat(violations).isEmpty();
                    assertThat(run.result(produce).releases).hasValue(1);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @ParameterizedTest
    @EnumSource(FailureMode.class)
    void aResultIsNotReleasedWhileAnotherConsumerStillReadsAfterOneFailed(FailureMode mode) {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = scheduler();
            try {
                ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
                TaskGraph g = TaskGraph.named("two-consumers-" + mode);
                Task<Buffer> produce = g.task("produce").gpu(ctx -> new Buffer(violations, false));
                CountDownLatch slowReading = new CountDownLatch(1);
                g.task("fails").after(produce).cpu(ctx -> {
                    slowReading.await(5, TimeUnit.SECONDS);
                    throw new IllegalStateException("consumer failed");
                });
                g.task("slow").after(produce).cpu(ctx -> {
                    Buffer b = ctx.input(produce);
                    slowReading.countDown();
                    return b.read("slow", 300);
                });
                GraphRun run = s.submit(g, RunOptions.failureMode(mode));
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(violations).as(mode.toString()).isEmpty();
                assertThat(run.result(produce).releases).hasValue(1);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aResultIsNotReleasedWhileACancelledConsumerIgnoringTheInterruptStillReads() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = scheduler();
            try {
                for (int variant = 0; variant < 3; variant++) {
                    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
                    TaskGraph g = TaskGraph.named("cancelled-consumer-" + variant);
                    Task<Buffer> produce = g.task("produce").gpu(ctx -> new Buffer(violations, false));
                    CountDownLatch reading = new CountDownLatch(1);
                    Task<Integer> consume = g.task("consume").after(produce).cpu(ctx -> {
                        Buffer b = ctx.input(produce);
                        reading.countDown();
                        return b.read("consume", 300);
                    });
                    GraphRun run = s.submit(g);
                    assertThat(reading.await(5, TimeUnit.SECONDS)).isTrue();
                    Buffer buffer = run.whenDone(produce).get(5, TimeUnit.SECONDS);
                    if (variant == 0) {
                        run.cancel();
                    } else if (variant == 1) {
                        run.cancel(consume);
                    } else {
                        run.cancel(produce);
                    }
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    assertThat(violations).as("variant " + variant).isEmpty();
                    org.awaitility.Awaitility.await()
                            .atMost(Duration.ofSeconds(2))
                            .untilAsserted(() -> assertThat(buffer.releases).hasValue(1));
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aResultIsNotReleasedWhileATimedOutConsumerAttemptStillReadsDuringItsRetry() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = scheduler();
            try {
                for (int k = 0; k < 3; k++) {
                    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
                    TaskGraph g = TaskGraph.named("timedout-consumer-" + k);
                    Task<Buffer> produce = g.task("produce").gpu(ctx -> new Buffer(violations, false));
                    Task<Integer> consume = g.task("consume")
                            .after(produce)
                            .timeout(Duration.ofMillis(50))
                            .retries(1, Duration.ZERO)
                            .cpu(ctx -> {
                                Buffer b = ctx.input(produce);
                                // attempt 1 ignores its interrupt and reads on for 400 ms; attempt 2 is quick
                                return b.read("consume#" + ctx.attempt(), ctx.attempt() == 1 ? 400 : 1);
                            });
                    Task<Integer> after = g.task("after").after(consume).cpu(ctx -> ctx.input(consume));
                    GraphRun run = s.submit(g);
                    assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                    Buffer buffer = run.result(produce);
                    org.awaitility.Awaitility.await()
                            .atMost(Duration.ofSeconds(3))
                            .untilAsserted(() -> assertThat(buffer.releases).hasValue(1));
                    assertThat(violations).isEmpty();
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aReleaseThatThrowsDoesNotBreakTheRunOrOtherReleases() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = scheduler();
            try {
                for (int k = 0; k < 5; k++) {
                    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
                    TaskGraph g = TaskGraph.named("throwing-release-" + k);
                    Task<Buffer> bad = g.task("bad").gpu(ctx -> new Buffer(violations, true));
                    Task<Buffer> good = g.task("good").gpu(ctx -> new Buffer(violations, false));
                    Task<Integer> c1 = g.task("c1")
                            .after(bad, good)
                            .cpu(ctx -> ctx.input(bad).read("c1", 1)
                                    + ctx.input(good).read("c1", 1));
                    Task<Integer> c2 = g.task("c2").after(c1).cpu(ctx -> ctx.input(c1) + 1);
                    GraphRun run = s.submit(g);
                    assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                    Checks.assertConsistent(run);
                    assertThat(run.result(c2)).isEqualTo(3);
                    assertThat(run.result(good).releases).hasValue(1);
                    assertThat(run.result(bad).releases).hasValue(1);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aReleaseThatThrowsAnErrorDoesNotHangTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = scheduler();
            try {
                TaskGraph g = TaskGraph.named("release-error");
                Task<Releasable> bad = g.task("bad").gpu(ctx -> () -> {
                    throw new StackOverflowError("release overflow");
                });
                Task<Integer> c1 = g.task("c1").after(bad).cpu(ctx -> 1);
                Task<Integer> c2 = g.task("c2").after(c1).cpu(ctx -> ctx.input(c1) + 1);
                GraphRun run = s.submit(g);
                assertThat(Checks.awaitEnd(run, Duration.ofSeconds(5))).isNull();
                Checks.assertConsistent(run);
                assertThat(run.result(c2)).isEqualTo(2);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aProducerResultReturnedAfterTheRunWasCancelledIsReleased() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = scheduler();
            try {
                ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
                ConcurrentLinkedQueue<Buffer> made = new ConcurrentLinkedQueue<>();
                TaskGraph g = TaskGraph.named("cancelled-producer");
                CountDownLatch inBody = new CountDownLatch(1);
                Task<Buffer> produce = g.task("produce").cpu(ctx -> {
                    inBody.countDown();
                    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait(); // ignores the interrupt
                    }
                    Buffer b = new Buffer(violations, false);
                    made.add(b);
                    return b;
                });
                g.task("consume").after(produce).gpu(ctx -> ctx.input(produce).read("consume", 1));
                GraphRun run = s.submit(g);
                assertThat(inBody.await(5, TimeUnit.SECONDS)).isTrue();
                run.cancel();
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(made).hasSize(1);
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(2))
                        .untilAsserted(() -> assertThat(made.peek().releases).hasValue(1));
            } finally {
                closeQuietly(s);
            }
        });
    }
}
