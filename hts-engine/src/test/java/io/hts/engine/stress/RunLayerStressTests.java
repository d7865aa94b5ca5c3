package io.hts.engine.stress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskContext;
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
import io.hts.engine.run.TaskFailure;
import io.hts.engine.support.Blocking;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Random graphs run through the public API under everything that goes wrong at once: bodies that
 * throw, flaky bodies with retries, time-outs (bodies that honour the interrupt and bodies that
 * ignore it), nested runs waited for inside bodies, cancels of runs, tasks and groups at random
 * moments (from outside and from inside bodies), resources, a device backend that drops, rejects,
 * falls back and reports twice, and listeners that throw errors (StackOverflowError included).
 * After every run: it ended; every task is in exactly one final state, ended exactly once (one
 * terminal event each, the pending count exactly zero); the run's status agrees with its tasks and
 * with {@code cancel()}'s answer; every succeeded task's result is right; every task cancelled
 * because of a failure carries that failure as its cause; every {@code whenDone} future is
 * complete. Across all runs: no thread is left, and the heap is flat.
 *
 * <p>{@code -Dhts.stress.runs=N} sets the runs per worker count (default 1,500, within
 * {@code -Dhts.stress.seconds}, default 12 s, per worker count); docs/reliability.md records a long
 * run. A budget past two minutes also needs JUnit's default time-out raised, e.g.
 * {@code -Djunit.jupiter.execution.timeout.default=10m}.
 */
class RunLayerStressTests {

    private static final int RUNS = Integer.getInteger("hts.stress.runs", 1_500);
    private static final long BUDGET_NANOS = TimeUnit.SECONDS.toNanos(Long.getLong("hts.stress.seconds", 12));
    private static final long SEED = Long.getLong("hts.stress.seed", System.nanoTime());

    /**
     * With listeners that want every event, and with listeners that want only the notable ones:
     * then no task publishes TASK_READY, and a CPU task with one dependency starts on the worker
     * that ran that dependency, counting it and starting in one step (no READY in between).
     */
    @ParameterizedTest(name = "{0} workers, routine events {1}")
    @CsvSource({"1, true", "2, true", "4, true", "8, true", "2, false", "4, false"})
    void randomRunsUnderFaultsAndCancelsEndWithEveryTaskFinalExactlyOnce(int workers, boolean routine)
            throws Exception {
        int threadsBefore = liveThreads();
        ChaosGpuBackend gpu = new ChaosGpuBackend(SEED);
        EndCounter ends = new EndCounter(routine);
        AtomicInteger listenerCalls = new AtomicInteger();
        long start = System.nanoTime();
        int runs = 0;
        long heapAfterWarmUp = -1;
        long heapAtEnd = -1;
        SplittableRandom seeds = new SplittableRandom(SEED ^ workers);
        Scheduler scheduler = Scheduler.builder()
                .threads(workers)
                .gpuBackend(gpu)
                .resource("io", 2)
                .threadNamePrefix("hts-stress-")
                .retainedRuns(4)
                .listener(ends)
                .listener(new ThrowingListener(listenerCalls, routine))
                .build();
        try {
            while (runs < RUNS && System.nanoTime() - start < BUDGET_NANOS) {
                long seed = seeds.nextLong();
                try {
                    oneRun(scheduler, ends, new SplittableRandom(seed));
                } catch (AssertionError ex) {
                    throw new AssertionError(
                            "run " + runs + " on " + workers + " workers failed; reproduce with" + " -Dhts.stress.seed="
                                    + SEED + " (this run's seed " + seed + "): " + ex.getMessage(),
                            ex);
                }
                runs++;
                if (runs == Math.min(RUNS / 10, 200)) {
                    heapAfterWarmUp = usedHeapAfterGc();
                }
            }
            assertThat(scheduler.activeRuns())
                    .as("every run finished and left the scheduler")
                    .isEmpty();
            if (heapAfterWarmUp > 0) {
                heapAtEnd = usedHeapAfterGc();
                assertThat(heapAtEnd - heapAfterWarmUp)
                        .as("heap growth over %d runs (bytes)", runs)
                        .isLessThan(32L << 20);
            }
        } finally {
            scheduler.shutdownNow();
            assertThat(scheduler.awaitTermination(Duration.ofSeconds(60)))
                    .as("the scheduler terminates")
                    .isTrue();
        }
        assertThat(gpu.engineErrors())
                .as("what the engine threw into its device backend")
                .isEmpty();
        assertThat(runs).as("runs made").isPositive();
        assertThat(listenerCalls.get()).as("the throwing listener was called").isPositive();
        awaitThreadsBackTo(threadsBefore);
        System.out.printf(
                "stress: %d workers, %d runs in %d ms (seed %d); heap after GC %d KiB after warm-up,"
                        + " %d KiB at the end; threads back to %d%n",
                workers,
                runs,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                SEED,
                heapAfterWarmUp >> 10,
                heapAtEnd >> 10,
                threadsBefore);
    }

    private void oneRun(Scheduler scheduler, EndCounter ends, SplittableRandom random) throws Exception {
        Shape shape = Shape.random(random);
        FailureMode mode = random.nextBoolean() ? FailureMode.FAIL_FAST : FailureMode.CONTINUE;
        GraphRun run = scheduler.submit(shape.graph, RunOptions.failureMode(mode));
        ends.expect(run.runId(), shape.size());
        shape.run.set(run);
        List<CompletableFuture<Long>> watched = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            watched.add(run.whenDone(shape.tasks.get(random.nextInt(shape.size()))));
        }
        boolean cancelled = false;
        switch (random.nextInt(6)) {
            case 0 -> {
                shape.userCancel = true;
                cancelled = run.cancel();
            }
            case 1 -> {
                shape.userCancel = true;
                run.cancel(shape.tasks.get(random.nextInt(shape.size())));
            }
            case 2 -> {
                if (shape.group != null) {
                    shape.userCancel = true;
                    run.cancel(shape.group);
                }
            }
            default -> {}
        }
        try {
            run.await(Duration.ofSeconds(60));
        } catch (TimeoutException ex) {
            fail("the run did not end: " + run.diagnose());
        } catch (GraphRunException ex) {
            assertThat(ex.status()).isEqualTo(run.status());
        }
        check(run, shape, ends, cancelled || shape.cancelledFromInside.get() > 0);
        for (CompletableFuture<Long> f : watched) {
            assertThat(f).as("whenDone completes when its task ends").isDone();
        }
    }

    private void check(GraphRun run, Shape shape, EndCounter ends, boolean runCancelWon) {
        assertThat(run.isDone()).isTrue();
        assertThat(run.pendingTasks()).as("each task counted exactly once").isZero();
        Map<String, TaskState> states = run.states();
        boolean anyFailed = false;
        boolean anyCancelled = false;
        for (int i = 0; i < shape.size(); i++) {
            Task<Long> t = shape.tasks.get(i);
            TaskState s = states.get(t.name());
            assertThat(s.isTerminal()).as("task %s is final", t.name()).isTrue();
            if (ends.routine || s != TaskState.SUCCEEDED) {
                assertThat(ends.ends(run.runId(), t.name()))
                        .as("terminal events of %s (%s)", t.name(), s)
                        .isOne();
                assertThat(ends.lastState(run.runId(), t.name()))
                        .as("the end event of %s", t.name())
                        .isEqualTo(s);
            } else {
                assertThat(ends.ends(run.runId(), t.name()))
                        .as("routine events of %s, unwanted", t.name())
                        .isZero();
            }
            anyFailed |= s == TaskState.FAILED;
            anyCancelled |= s == TaskState.CANCELLED;
            if (s == TaskState.SUCCEEDED) {
                assertThat(run.result(t)).as("result of %s", t.name()).isEqualTo(shape.expected(i, run));
            } else {
                assertThat(run.error(t)).as("cause of %s", t.name()).isPresent();
            }
        }
        for (TaskFailure f : run.failures()) {
            assertThat(states.get(f.taskName()))
                    .as("failures() lists only FAILED tasks")
                    .isEqualTo(TaskState.FAILED);
        }
        assertThat(run.failures()).hasSize((int)
                states.values().stream().filter(s -> s == TaskState.FAILED).count());
        RunStatus expected =
                anyFailed ? RunStatus.FAILED : anyCancelled || runCancelWon ? RunStatus.CANCELLED : RunStatus.SUCCEEDED;
        if (runCancelWon && !anyFailed) {
            assertThat(run.status()).as("a run whose cancel() returned true").isEqualTo(RunStatus.CANCELLED);
        } else {
            assertThat(run.status()).isEqualTo(expected);
        }
        checkCauses(run, shape, states);
        ends.forget(run.runId());
    }

    /**
     * Without cancellations asked for, a task is cancelled only because a task failed (its
     * dependency, or any task of a fail-fast run): it carries that failure in its cause chain.
     */
    private void checkCauses(GraphRun run, Shape shape, Map<String, TaskState> states) {
        if (shape.userCancel || shape.behaviours.contains(Behaviour.CANCELS_ITS_RUN)) {
            return;
        }
        List<Throwable> failures =
                run.failures().stream().map(TaskFailure::error).toList();
        for (int i = 0; i < shape.size(); i++) {
            Task<Long> t = shape.tasks.get(i);
            if (states.get(t.name()) != TaskState.CANCELLED) {
                continue;
            }
            assertThat(failures)
                    .as("%s was cancelled though nobody asked and nothing failed", t.name())
                    .isNotEmpty();
            if (run.failureMode() == FailureMode.CONTINUE) {
                assertThat(shape.downstreamOfFailure(i, states))
                        .as("in CONTINUE only descendants of a failure are" + " cancelled: %s", t.name())
                        .isTrue();
            }
            Throwable cause = run.error(t).orElseThrow();
            assertThat(cause).as("cause of %s", t.name()).isInstanceOf(TaskCancelledException.class);
            assertThat(chainContainsAny(cause, failures))
                    .as("the cause of %s (%s) names a failure of the run", t.name(), cause)
                    .isTrue();
        }
    }

    private static boolean chainContainsAny(Throwable t, List<Throwable> failures) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            for (Throwable f : failures) {
                if (c == f) {
                    return true;
                }
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ random graphs

    /** What a random task does. */
    private enum Behaviour {
        PLAIN,
        THROWS,
        FLAKY,
        TIMES_OUT,
        TIMES_OUT_IGNORING_INTERRUPTS,
        NESTED,
        CANCELS_ITS_RUN,
        USES_IO,
        ON_GPU,
        GPU_ONLY
    }

    private static final class Shape {

        final TaskGraph graph;
        final List<Task<Long>> tasks = new ArrayList<>();
        final List<List<Integer>> inputs = new ArrayList<>();
        final List<Behaviour> behaviours = new ArrayList<>();
        final AtomicReference<GraphRun> run = new AtomicReference<>();
        final AtomicInteger cancelledFromInside = new AtomicInteger();
        TaskGroup<Long> group;
        volatile boolean userCancel;

        private Shape(String name) {
            this.graph = TaskGraph.named(name);
        }

        int size() {
            return tasks.size();
        }

        static Shape random(SplittableRandom random) {
            Shape s = new Shape("stress");
            int n = 3 + random.nextInt(30);
            for (int i = 0; i < n; i++) {
                List<Integer> deps = new ArrayList<>();
                int fanIn = i == 0 ? 0 : random.nextInt(Math.min(i, 4) + 1);
                for (int d = 0; d < fanIn; d++) {
                    int p = random.nextInt(i);
                    if (!deps.contains(p)) {
                        deps.add(p);
                    }
                }
                s.add(i, deps, s.behaviour(random), random);
            }
            if (random.nextInt(3) == 0) {
                int first = s.size();
                int members = 2 + random.nextInt(4);
                int upstream = random.nextInt(first);
                s.group = s.graph.group("g", members, (m, b) -> {
                    int index = first + m;
                    s.inputs.add(List.of(upstream));
                    s.behaviours.add(Behaviour.PLAIN);
                    Task<Long> t =
                            b.after(s.tasks.get(upstream)).cpu(ctx -> index * 31L + ctx.input(s.tasks.get(upstream)));
                    s.tasks.add(t);
                    return t;
                });
            }
            return s;
        }

        private Behaviour behaviour(SplittableRandom random) {
            int r = random.nextInt(100);
            if (r < 55) {
                return Behaviour.PLAIN;
            }
            Behaviour[] rare = Behaviour.values();
            return rare[1 + random.nextInt(rare.length - 1)];
        }

        private void add(int i, List<Integer> deps, Behaviour behaviour, SplittableRandom random) {
            TaskBuilder b = graph.task("t" + i);
            for (int d : deps) {
                b.after(tasks.get(d));
            }
            inputs.add(deps);
            behaviours.add(behaviour);
            long sleepy = 1 + random.nextInt(3);
            TaskBody<Long> value = ctx -> value(i, deps, ctx);
            Task<Long> t = switch (behaviour) {
                case PLAIN -> b.cpu(value);
                case THROWS ->
                    b.cpu(ctx -> {
                        throw new IllegalStateException("t" + i + " fails on purpose");
                    });
                case FLAKY ->
                    b.retries(2, Duration.ZERO).cpu(ctx -> {
                        if (ctx.attempt() == 1) {
                            throw new IllegalStateException("t" + i + " fails its first attempt");
                        }
                        return value(i, deps, ctx);
                    });
                case TIMES_OUT ->
                    b.timeout(Duration.ofMillis(1)).retries(random.nextInt(2)).cpu(ctx -> {
                        Blocking.untilInterrupted(Duration.ofMillis(50)); // interrupted by the time-out
                        return value(i, deps, ctx);
                    });
                case TIMES_OUT_IGNORING_INTERRUPTS ->
                    b.timeout(Duration.ofMillis(1)).cpu(ctx -> {
                        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3 + sleepy);
                        while (System.nanoTime() < until) {
                            Thread.onSpinWait(); // ignores the interrupt
                        }
                        return value(i, deps, ctx);
                    });
                case NESTED ->
                    b.cpu(ctx -> {
                        TaskGraph inner = TaskGraph.named("inner");
                        Task<Long> a = inner.task("a").cpu(c -> 7L);
                        Task<Long> z = inner.task("z").after(a).cpu(c -> c.input(a) * 6);
                        long answer = ctx.execute(inner).result(z);
                        return value(i, deps, ctx) + answer - 42;
                    });
                case CANCELS_ITS_RUN ->
                    b.cpu(ctx -> {
                        GraphRun r = run.get();
                        if (r != null && r.cancel()) {
                            cancelledFromInside.incrementAndGet();
                        }
                        return value(i, deps, ctx);
                    });
                case USES_IO -> b.resource("io", 1 + random.nextInt(2)).cpu(value);
                case ON_GPU -> b.bodies(value, gpu(i, deps));
                case GPU_ONLY -> b.gpu(gpu(i, deps));
            };
            tasks.add(t);
        }

        private GpuBody<Long> gpu(int i, List<Integer> deps) {
            return ctx -> value(i, deps, ctx);
        }

        private long value(int i, List<Integer> deps, TaskContext ctx) {
            long v = i * 31L;
            for (int d : deps) {
                v += ctx.input(tasks.get(d));
            }
            return v;
        }

        /** The result task {@code i} must have, from its inputs' results in {@code run}. */
        long expected(int i, GraphRun r) {
            long v = i * 31L;
            for (int d : inputs.get(i)) {
                v += r.result(tasks.get(d));
            }
            return v;
        }

        /** Whether some task upstream of {@code i} failed. */
        boolean downstreamOfFailure(int i, Map<String, TaskState> states) {
            for (int p : inputs.get(i)) {
                if (states.get(tasks.get(p).name()) == TaskState.FAILED || downstreamOfFailure(p, states)) {
                    return true;
                }
            }
            return false;
        }
    }

    // ------------------------------------------------------------------ listeners

    /** Counts the terminal events of every task of every run. */
    private static final class EndCounter implements TaskListener {

        private final Map<Long, Map<String, AtomicInteger>> ends = new ConcurrentHashMap<>();
        private final Map<Long, Map<String, TaskState>> last = new ConcurrentHashMap<>();
        /** Whether it wants routine events (a task's success among them). */
        final boolean routine;

        EndCounter(boolean routine) {
            this.routine = routine;
        }

        @Override
        public boolean wantsRoutineEvents() {
            return routine;
        }

        void expect(long runId, int tasks) {
            ends.computeIfAbsent(runId, k -> new ConcurrentHashMap<>());
            last.computeIfAbsent(runId, k -> new ConcurrentHashMap<>());
        }

        @Override
        public void onEvent(TaskEvent e) {
            TaskState s = switch (e.type()) {
                case TASK_SUCCEEDED -> TaskState.SUCCEEDED;
                case TASK_FAILED -> TaskState.FAILED;
                case TASK_CANCELLED -> TaskState.CANCELLED;
                default -> null;
            };
            if (s == null || e.taskName() == null || !"stress".equals(e.graphName())) {
                return;
            }
            ends.computeIfAbsent(e.runId(), k -> new ConcurrentHashMap<>())
                    .computeIfAbsent(e.taskName(), k -> new AtomicInteger())
                    .incrementAndGet();
            last.computeIfAbsent(e.runId(), k -> new ConcurrentHashMap<>()).put(e.taskName(), s);
        }

        int ends(long runId, String task) {
            AtomicInteger n = ends.getOrDefault(runId, Map.of()).get(task);
            return n == null ? 0 : n.get();
        }

        TaskState lastState(long runId, String task) {
            return last.getOrDefault(runId, Map.of()).get(task);
        }

        void forget(long runId) {
            ends.remove(runId);
            last.remove(runId);
        }
    }

    /** Throws now and then, an Error among what it throws. */
    private static final class ThrowingListener implements TaskListener {

        private final AtomicInteger calls;
        private final AtomicLong sequence = new AtomicLong();

        private final boolean routine;

        ThrowingListener(AtomicInteger calls, boolean routine) {
            this.calls = calls;
            this.routine = routine;
        }

        @Override
        public boolean wantsRoutineEvents() {
            return routine;
        }

        @Override
        public void onEvent(TaskEvent e) {
            calls.incrementAndGet();
            long n = sequence.incrementAndGet();
            if (n % 97 == 0) {
                throw new StackOverflowError("listener blew its stack on " + e.type());
            }
            if (n % 89 == 0) {
                throw new AssertionError("listener assertion on " + e.type());
            }
            if (n % 13 == 0) {
                throw new IllegalStateException("listener failed on " + e.type());
            }
            if (e.type() == EventType.RUN_SUCCEEDED && n % 3 == 0) {
                throw new StackOverflowError("listener blew its stack on the run's end");
            }
        }
    }

    // ------------------------------------------------------------------ environment

    private static int liveThreads() {
        return Thread.getAllStackTraces().keySet().size();
    }

    private static void awaitThreadsBackTo(int before) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<String> ours = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            ours.clear();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.isAlive() && t.getName().startsWith("hts-stress-")) {
                    ours.add(t.getName());
                }
            }
            if (ours.isEmpty()) {
                return;
            }
            Thread.onSpinWait();
        }
        fail("threads left after the scheduler closed: " + ours + " (" + liveThreads() + " live, " + before
                + " before)");
    }

    private static long usedHeapAfterGc() {
        var memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
