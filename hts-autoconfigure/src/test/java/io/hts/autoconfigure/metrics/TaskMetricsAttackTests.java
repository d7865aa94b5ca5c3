package io.hts.autoconfigure.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.policy.CpuFirstPolicy;
import io.hts.engine.policy.RoundRobinPolicy;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.RunOptions;
import io.hts.engine.run.Scheduler;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Attacks on the hts.tasks / hts.runs metrics fed from RunProfile.ranTotals at each run's end. */
class TaskMetricsAttackTests {

    static double taskCount(MeterRegistry r) {
        return r.find("hts.tasks").functionTimers().stream()
                .mapToDouble(FunctionTimer::count)
                .sum();
    }

    static double taskNanos(MeterRegistry r) {
        return r.find("hts.tasks").functionTimers().stream()
                .mapToDouble(t -> t.totalTime(TimeUnit.NANOSECONDS))
                .sum();
    }

    static long runCount(MeterRegistry r) {
        return r.find("hts.runs").timers().stream().mapToLong(t -> t.count()).sum();
    }

    static long[] ranOf(RunProfile p) {
        long[] out = new long[2];
        p.ranTotals((d, s, c, n) -> {
            out[0] += c;
            out[1] += n;
        });
        return out;
    }

    static TaskGraph mixed(String name) {
        TaskGraph g = TaskGraph.named(name);
        var a = g.task("a").cpu(ctx -> 1);
        g.group("part", 5, (k, t) -> t.after(a).cpu(ctx -> k));
        if (ThreadLocalRandom.current().nextInt(4) == 0) {
            g.task("boom").after(a).cpu(ctx -> {
                throw new IllegalStateException("boom");
            });
        }
        return g;
    }

    /** Many runs from several threads at once, policies switched meanwhile: the metric is the sum of the profiles. */
    @Test
    void concurrentRunsAddUp() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            MeterRegistry registry = new SimpleMeterRegistry();
            new HtsMetrics(s).bindTo(registry);
            AtomicLong tasks = new AtomicLong();
            AtomicLong nanos = new AtomicLong();
            AtomicLong runs = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> all = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    all.add(pool.submit(() -> {
                        for (int i = 0; i < 300; i++) {
                            if (i % 50 == 0) {
                                s.setPolicy(i % 100 == 0 ? new RoundRobinPolicy() : new CpuFirstPolicy());
                            }
                            GraphRun run = s.submit(mixed("m"), RunOptions.failureMode(FailureMode.CONTINUE));
                            try {
                                run.await(Duration.ofSeconds(20));
                            } catch (Exception expected) {
                                // failed runs count too
                            }
                            long[] ran = ranOf(run.profile());
                            tasks.addAndGet(ran[0]);
                            nanos.addAndGet(ran[1]);
                            runs.incrementAndGet();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : all) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(runCount(registry)).as("hts.runs").isEqualTo(runs.get());
            assertThat(taskCount(registry)).as("hts.tasks count").isEqualTo((double) tasks.get());
            assertThat(taskNanos(registry))
                    .as("hts.tasks total")
                    .isCloseTo((double) nanos.get(), org.assertj.core.data.Offset.offset(1e3));
        }
    }

    /**
     * hts.runs is "makespan of each finished run", with no condition on the profile being kept;
     * with hts.profiling.retained-runs=0 (keep no profiles) it should still count the runs.
     */
    @Test
    void runsAreTimedWhenNoProfileIsKept() {
        try (Scheduler s = Scheduler.builder().threads(2).retainedRuns(0).build()) {
            MeterRegistry registry = new SimpleMeterRegistry();
            new HtsMetrics(s).bindTo(registry);
            TaskGraph g = TaskGraph.named("unkept");
            g.task("a").cpu(ctx -> 1);
            for (int i = 0; i < 5; i++) {
                s.execute(g);
            }
            assertThat(runCount(registry))
                    .as("hts.runs counts every finished run")
                    .isEqualTo(5);
        }
    }

    /** Same with profiling off: the run's makespan needs no per-task timings. */
    @Test
    void runsAreTimedWithProfilingOff() {
        try (Scheduler s = Scheduler.builder().threads(2).profiling(false).build()) {
            MeterRegistry registry = new SimpleMeterRegistry();
            new HtsMetrics(s).bindTo(registry);
            TaskGraph g = TaskGraph.named("untimed");
            g.task("a").cpu(ctx -> 1);
            for (int i = 0; i < 5; i++) {
                s.execute(g);
            }
            assertThat(runCount(registry)).as("hts.runs").isEqualTo(5);
            assertThat(taskCount(registry)).as("no hts.tasks without timings").isZero();
        }
    }

    /**
     * The profile is kept (retained-runs=1), but another run finishes between the run's end and
     * the metrics listener's look-up in the profiler: the run is lost from hts.runs and hts.tasks.
     * A listener registered first makes the window wide enough to hit every time.
     */
    @Test
    void aRunWhoseProfileIsEvictedBeforeTheMetricsListenerReadsItIsLost() throws Exception {
        CountDownLatch otherDone = new CountDownLatch(1);
        TaskListener slowFirst = new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {
                if (event.type() == EventType.RUN_SUCCEEDED && event.graphName().equals("first")) {
                    try {
                        otherDone.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                }
            }

            @Override
            public boolean wantsRoutineEvents() {
                return false;
            }
        };
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .retainedRuns(1)
                .listener(slowFirst)
                .build()) {
            MeterRegistry registry = new SimpleMeterRegistry();
            new HtsMetrics(s).bindTo(registry);
            TaskGraph first = TaskGraph.named("first");
            first.task("a").cpu(ctx -> 1);
            TaskGraph second = TaskGraph.named("second");
            second.task("b").cpu(ctx -> 2);
            GraphRun one = s.submit(first);
            // waits until 'first' is in its end (its profile kept, its listeners being called)
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> s.profiler().run(one.runId()).isPresent());
            s.execute(second); // launched by this thread: its profile evicts first's (retained-runs=1)
            otherDone.countDown();
            one.await(Duration.ofSeconds(20));
            assertThat(runCount(registry)).as("hts.runs: both runs finished").isEqualTo(2);
            assertThat(taskCount(registry)).as("hts.tasks: both runs' tasks").isEqualTo(2.0);
        }
    }

    /** Natural version: many tiny concurrent runs with retained-runs=1. */
    @Test
    void tinyConcurrentRunsWithOneRetainedProfile() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).retainedRuns(1).build()) {
            MeterRegistry registry = new SimpleMeterRegistry();
            new HtsMetrics(s).bindTo(registry);
            TaskGraph g = TaskGraph.named("tiny");
            g.task("a").cpu(ctx -> 1);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            AtomicLong runs = new AtomicLong();
            try {
                List<Future<?>> all = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    all.add(pool.submit(() -> {
                        for (int i = 0; i < 3000; i++) {
                            s.execute(g);
                            runs.incrementAndGet();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : all) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            System.out.println("TINY: runs " + runs.get() + " hts.runs " + runCount(registry) + " hts.tasks "
                    + taskCount(registry));
            assertThat(runCount(registry)).as("hts.runs").isEqualTo(runs.get());
            assertThat(taskCount(registry)).as("hts.tasks").isEqualTo((double) runs.get());
        }
    }

    /** Default retention (20 profiles) and many concurrent submitters. */
    @Test
    void tinyConcurrentRunsWithDefaultRetention() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            MeterRegistry registry = new SimpleMeterRegistry();
            new HtsMetrics(s).bindTo(registry);
            TaskGraph g = TaskGraph.named("tiny");
            g.task("a").cpu(ctx -> 1);
            ExecutorService pool = Executors.newFixedThreadPool(32);
            AtomicLong runs = new AtomicLong();
            try {
                List<Future<?>> all = new ArrayList<>();
                for (int t = 0; t < 32; t++) {
                    all.add(pool.submit(() -> {
                        for (int i = 0; i < 1000; i++) {
                            s.submit(g).await(Duration.ofSeconds(30));
                            runs.incrementAndGet();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : all) {
                    f.get(300, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            System.out.println("TINY20: runs " + runs.get() + " hts.runs " + runCount(registry) + " hts.tasks "
                    + taskCount(registry));
            assertThat(runCount(registry)).as("hts.runs").isEqualTo(runs.get());
        }
    }

    /** Cancelled runs at random moments: their ran tasks count under outcome cancelled / succeeded. */
    @Test
    void cancelledRunsAddUp() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            MeterRegistry registry = new SimpleMeterRegistry();
            new HtsMetrics(s).bindTo(registry);
            long tasks = 0;
            for (int round = 0; round < 100; round++) {
                TaskGraph g = TaskGraph.named("c");
                for (int i = 0; i < 40; i++) {
                    g.task("t" + i).cpu(ctx -> {
                        long until = System.nanoTime() + 20_000;
                        while (System.nanoTime() < until) {
                            ctx.checkCancelled();
                        }
                        return 1;
                    });
                }
                GraphRun run = s.submit(g);
                long until = System.nanoTime() + ThreadLocalRandom.current().nextLong(0, 400_000);
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                run.cancel();
                await().atMost(Duration.ofSeconds(20)).until(run::isDone);
                tasks += ranOf(run.profile())[0];
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> runCount(registry) == 100);
            assertThat(taskCount(registry)).isEqualTo((double) tasks);
        }
    }
}
