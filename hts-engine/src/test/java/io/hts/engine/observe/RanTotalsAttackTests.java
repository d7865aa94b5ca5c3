package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Attacks on {@link RunProfile#ranTotals}: it must agree with {@link RunProfile#tasks()} in every case. */
class RanTotalsAttackTests {

    /** device/state -> {count, nanos} from the per-task timings. */
    static Map<String, long[]> fromTimings(RunProfile p) {
        Map<String, long[]> expected = new TreeMap<>();
        for (TaskTiming t : p.tasks()) {
            if (t.ran()) {
                long[] e = expected.computeIfAbsent(t.device() + "/" + t.state(), k -> new long[2]);
                e[0]++;
                e[1] += t.durationNanos();
            }
        }
        return expected;
    }

    static Map<String, long[]> fromTotals(RunProfile p) {
        Map<String, long[]> seen = new TreeMap<>();
        p.ranTotals((device, state, count, nanos) -> {
            assertThat(count).isPositive();
            assertThat(nanos).isNotNegative();
            assertThat(seen.put(device + "/" + state, new long[] {count, nanos}))
                    .as("once each")
                    .isNull();
        });
        return seen;
    }

    static void agree(RunProfile p) {
        Map<String, long[]> expected = fromTimings(p);
        Map<String, long[]> seen = fromTotals(p);
        assertThat(seen.keySet()).as("run %s", p.runId()).isEqualTo(expected.keySet());
        seen.forEach((k, v) -> assertThat(v).as("run %s %s", p.runId(), k).containsExactly(expected.get(k)));
    }

    static long count(Map<String, long[]> m, String key) {
        long[] v = m.get(key);
        return v == null ? 0 : v[0];
    }

    /** A body that does not stop when interrupted: its time limit abandons it. */
    static void awaitIgnoringInterrupts(CountDownLatch latch) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (latch.getCount() > 0 && System.nanoTime() < deadline) {
            try {
                latch.await(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ignored) {
                // keeps running, as a body that ignores interrupts does
            }
        }
    }

    @Test
    void retriesCountOnceWithTheLastAttempt() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("retries");
            AtomicInteger flaky = new AtomicInteger();
            Task<Integer> a = g.task("flaky").retries(3, Duration.ofMillis(1)).cpu(ctx -> {
                if (flaky.incrementAndGet() < 3) {
                    throw new IllegalStateException("attempt " + ctx.attempt());
                }
                return 1;
            });
            g.task("hopeless").retries(2, Duration.ofMillis(1)).cpu(ctx -> {
                throw new IllegalStateException("never");
            });
            g.task("after").after(a).cpu(ctx -> 2);
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            await().atMost(Duration.ofSeconds(20)).until(run::isDone);
            RunProfile p = run.profile();
            agree(p);
            Map<String, long[]> totals = fromTotals(p);
            assertThat(count(totals, "CPU/SUCCEEDED")).isEqualTo(2);
            assertThat(count(totals, "CPU/FAILED")).isEqualTo(1);
        }
    }

    /** A timed-out body is abandoned; it returns after the run: the totals must not move. */
    @Test
    void timeoutsWithAbandonedBodies() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(3).build()) {
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger attempts = new AtomicInteger();
            TaskGraph g = TaskGraph.named("timeouts");
            g.task("stuck").timeout(Duration.ofMillis(50)).cpu(ctx -> {
                awaitIgnoringInterrupts(release);
                return 1;
            });
            g.task("stuckThenOk")
                    .timeout(Duration.ofMillis(50))
                    .retries(1, Duration.ofMillis(1))
                    .cpu(ctx -> {
                        if (attempts.incrementAndGet() == 1) {
                            awaitIgnoringInterrupts(release);
                        }
                        return 2;
                    });
            g.task("fine").cpu(ctx -> 3);
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            await().atMost(Duration.ofSeconds(20)).until(run::isDone);
            RunProfile p = run.profile();
            assertThat(p.abandoned()).isNotEmpty();
            agree(p);
            Map<String, long[]> before = fromTotals(p);
            assertThat(count(before, "CPU/FAILED"))
                    .as("the timed-out task ran and failed")
                    .isEqualTo(1);
            assertThat(count(before, "CPU/SUCCEEDED")).isEqualTo(2);
            release.countDown();
            await().atMost(Duration.ofSeconds(20)).until(() -> run.abandoned().isEmpty());
            Map<String, long[]> after = fromTotals(p);
            assertThat(after.keySet()).isEqualTo(before.keySet());
            after.forEach((k, v) -> assertThat(v)
                    .as("after the abandoned bodies returned: %s", k)
                    .containsExactly(before.get(k)));
            agree(p);
            agree(run.profile());
        }
    }

    @Test
    void groupsAndCancellingAGroup() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            CountDownLatch started = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("groups");
            Task<Integer> first = g.task("first").cpu(ctx -> 1);
            g.group("done", 50, (k, t) -> t.after(first).cpu(ctx -> k));
            TaskGroup<Integer> spin = g.group(
                    "spin",
                    4,
                    (k, t) -> t.after(first).cpu(ctx -> {
                        started.countDown();
                        while (true) {
                            ctx.checkCancelled();
                            Thread.onSpinWait();
                        }
                    }));
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
            run.cancel(spin);
            await().atMost(Duration.ofSeconds(20)).until(run::isDone);
            RunProfile p = run.profile();
            agree(p);
            Map<String, long[]> totals = fromTotals(p);
            assertThat(count(totals, "CPU/SUCCEEDED")).isEqualTo(51);
            assertThat(count(totals, "CPU/CANCELLED"))
                    .as("the spinners that started")
                    .isBetween(1L, 4L);
        }
    }

    /** Cancellations at random moments of a wide and deep run: totals agree with the timings every time. */
    @Test
    void cancellationsAtRandomMoments() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            for (int round = 0; round < 200; round++) {
                TaskGraph g = TaskGraph.named("random" + round);
                Task<Integer> prev = null;
                for (int i = 0; i < 60; i++) {
                    var b = g.task("t" + i);
                    if (prev != null && i % 3 == 0) {
                        b.after(prev);
                    }
                    Task<Integer> t = b.cpu(ctx -> {
                        long until =
                                System.nanoTime() + ThreadLocalRandom.current().nextLong(2_000, 40_000);
                        while (System.nanoTime() < until) {
                            ctx.checkCancelled();
                        }
                        return 1;
                    });
                    prev = t;
                }
                GraphRun run = s.submit(g);
                long wait = ThreadLocalRandom.current().nextLong(0, 600_000);
                long until = System.nanoTime() + wait;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                run.cancel();
                await().atMost(Duration.ofSeconds(20)).until(run::isDone);
                agree(run.profile());
                Map<String, long[]> totals = fromTotals(run.profile());
                long ran = totals.values().stream().mapToLong(v -> v[0]).sum();
                assertThat(ran).isLessThanOrEqualTo(60);
            }
        }
    }

    @Test
    void failuresUnderFailFast() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            for (int round = 0; round < 100; round++) {
                TaskGraph g = TaskGraph.named("failfast");
                int bad = ThreadLocalRandom.current().nextInt(30);
                for (int i = 0; i < 30; i++) {
                    int k = i;
                    g.task("t" + i).cpu(ctx -> {
                        if (k == bad) {
                            throw new IllegalStateException("bad " + k);
                        }
                        long until = System.nanoTime() + 10_000;
                        while (System.nanoTime() < until) {
                            ctx.checkCancelled();
                        }
                        return k;
                    });
                }
                GraphRun run = s.submit(g);
                await().atMost(Duration.ofSeconds(20)).until(run::isDone);
                agree(run.profile());
                assertThat(count(fromTotals(run.profile()), "CPU/FAILED")).isEqualTo(1);
            }
        }
    }

    @Test
    void profilingOffGivesNothing() {
        try (Scheduler s = Scheduler.builder().threads(2).profiling(false).build()) {
            TaskGraph g = TaskGraph.named("off");
            g.task("a").retries(1, Duration.ofMillis(1)).cpu(ctx -> {
                if (ctx.attempt() == 1) {
                    throw new IllegalStateException("x");
                }
                return 1;
            });
            GraphRun run = s.execute(g);
            assertThat(fromTotals(run.profile())).isEmpty();
            assertThat(fromTimings(run.profile())).isEmpty();
        }
    }

    /** A snapshot while the run is going: tasks running now have not ended and are not counted. */
    @Test
    void aSnapshotOfARunInProgress() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(3).build()) {
            CountDownLatch running = new CountDownLatch(2);
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger tries = new AtomicInteger();
            TaskGraph g = TaskGraph.named("snapshot");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            g.task("held1").after(a).cpu(ctx -> {
                running.countDown();
                release.await(20, TimeUnit.SECONDS);
                return 1;
            });
            // fails once, then waits in a long backoff: a snapshot sees its first attempt ended
            g.task("backoff").after(a).retries(1, Duration.ofSeconds(30)).cpu(ctx -> {
                if (tries.incrementAndGet() == 1) {
                    throw new IllegalStateException("first");
                }
                return 2;
            });
            g.task("held2").after(a).cpu(ctx -> {
                running.countDown();
                release.await(20, TimeUnit.SECONDS);
                return 1;
            });
            GraphRun run = s.submit(g);
            assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(20))
                    .until(() ->
                            tries.get() == 1 && run.profile().tasks().get(2).ran());
            RunProfile snap = run.profile();
            agree(snap);
            Map<String, long[]> totals = fromTotals(snap);
            System.out.println("SNAPSHOT " + totals.keySet() + " " + snap.tasks());
            assertThat(count(totals, "CPU/SUCCEEDED")).isEqualTo(1);
            release.countDown();
            run.cancel();
            await().atMost(Duration.ofSeconds(40)).until(run::isDone);
            agree(run.profile());
        }
    }

    /** The sum of the totals is the run's total work. */
    @Test
    void totalsAddUpToTotalWork() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("work");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            g.group("g", 20, (k, t) -> t.after(a).cpu(ctx -> k));
            g.task("boom").after(a).cpu(ctx -> {
                throw new IllegalStateException("b");
            });
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            await().atMost(Duration.ofSeconds(20)).until(run::isDone);
            RunProfile p = run.profile();
            agree(p);
            long sum = fromTotals(p).values().stream().mapToLong(v -> v[1]).sum();
            System.out.println("TOTALWORK " + sum + " vs " + p.totalWork().toNanos());
        }
    }
}
