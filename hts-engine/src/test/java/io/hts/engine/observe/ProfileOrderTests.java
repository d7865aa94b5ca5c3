package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.retry.RetryConfig;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * docs/engine.md: a task never starts before its dependencies end. In a run's profile every task
 * that ran starts at or after its ready time and the end of each of its dependencies, and after
 * whatever user code the scheduler ran between a dependency's end and its own start: a
 * {@code retryOnResult} predicate, listeners, {@code whenDone} stages, a device backend that
 * dispatches on the worker and falls back to the CPU, each of random duration (none half of the
 * time), on every task of many random graphs.
 *
 * <p>The user code records when it returned ({@link System#nanoTime()}); a profile's times count
 * from the run's submission, which the test brackets by reading the clock after {@code submit}
 * returned. A recorded start is surely too early when even that later base puts it before the end
 * of user code that ran, on the scheduler's threads, before the task could be ready.
 */
class ProfileOrderTests {

    private static final int RUNS = 1_200;

    /** Busy for up to {@code maxMicros} µs, chosen at random (none half of the time). */
    private static void userCode(int maxMicros) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        if (r.nextBoolean()) {
            return;
        }
        long until = System.nanoTime() + r.nextLong(maxMicros * 1_000L + 1);
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    /** One round: its graph, and when user code about each task last returned on a scheduler thread. */
    private static final class Round {
        final TaskGraph graph;
        final List<Task<Integer>> tasks = new ArrayList<>();
        /** When user code that must precede a task's successors (about the task's end) returned. */
        final AtomicLongArray userCodeEnd;
        /** When the backend's code that dispatched a task, before its own start, returned. */
        final AtomicLongArray dispatchEnd;

        final Thread caller = Thread.currentThread();

        Round(SplittableRandom random, int round, boolean gpu) {
            graph = TaskGraph.named("order-" + round);
            int n = 2 + random.nextInt(12);
            userCodeEnd = new AtomicLongArray(n);
            dispatchEnd = new AtomicLongArray(n);
            for (int i = 0; i < n; i++) {
                var b = graph.task("t" + i);
                int deps = i == 0 ? 0 : random.nextInt(Math.min(i, 3) + 1);
                for (int d = 0; d < deps; d++) {
                    b.after(tasks.get(random.nextInt(i)));
                }
                if (random.nextInt(3) == 0) {
                    int task = i;
                    int[] calls = {0};
                    b.retry(RetryConfig.<Object>custom()
                            .maxAttempts(3)
                            .waitDuration(Duration.ofMillis(1))
                            .retryOnResult(r -> userCode(task, 300, () -> ++calls[0] == 1)) // rejects the first
                            .build());
                }
                TaskBody<Integer> cpu = ctx -> {
                    ProfileOrderTests.userCode(50);
                    return 1;
                };
                tasks.add(gpu && random.nextBoolean() ? b.bodies(cpu, ctx -> 1) : b.cpu(cpu));
            }
        }

        /** Runs user code about task {@code i} and records when it returned, off the caller's thread. */
        <T> T userCode(int i, int maxMicros, java.util.function.Supplier<T> answer) {
            ProfileOrderTests.userCode(maxMicros);
            T a = answer.get();
            if (Thread.currentThread() != caller) { // on the caller it runs beside the run, not between tasks
                userCodeEnd.accumulateAndGet(i, System.nanoTime(), Math::max);
            }
            return a;
        }
    }

    @Test
    void everyTaskStartsAfterItsDependenciesAndTheUserCodeBetweenThem() throws Exception {
        AtomicReference<Round> current = new AtomicReference<>();
        // dispatches on the worker that made the task ready, and sends half of the tasks back to the CPU
        ScriptedBackend backend = new ScriptedBackend(1, (b, task) -> {
            Round r = current.get();
            int i = Integer.parseInt(task.taskName().substring(1));
            ProfileOrderTests.userCode(200);
            r.dispatchEnd.accumulateAndGet(i, System.nanoTime(), Math::max);
            if (ThreadLocalRandom.current().nextBoolean() && task.fallBackToCpu("sent back by the test")) {
                return;
            }
            ScriptedBackend.runAndReport(b, task);
        });
        backend.inline = true;
        TaskListener slowListener = new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {
                Round r = current.get();
                if (r != null && event.taskIndex() >= 0 && event.graphName().equals(r.graph.name())) {
                    r.userCode(event.taskIndex(), 100, () -> null);
                }
            }

            @Override
            public boolean wantsRoutineEvents() {
                return true;
            }
        };
        SplittableRandom random = new SplittableRandom(7);
        List<String> violations = new ArrayList<>();
        // a listener is user code between tasks too, but it must not be the only kind: rounds alternate
        try (Scheduler plain = Scheduler.builder().threads(2).profiling(true).build();
                Scheduler listened = Scheduler.builder()
                        .threads(2)
                        .profiling(true)
                        .listener(slowListener)
                        .build();
                Scheduler withGpu = Scheduler.builder()
                        .threads(2)
                        .profiling(true)
                        .gpuBackend(backend)
                        .policy(new GpuFirstPolicy())
                        .build()) {
            List<Scheduler> schedulers = List.of(plain, listened, withGpu);
            for (int round = 0; round < RUNS && violations.size() < 5; round++) {
                Round r = new Round(random, round, round % 3 == 2);
                current.set(r);
                GraphRun run = schedulers.get(round % 3).submit(r.graph);
                long base = System.nanoTime(); // at or after the run's own submission time
                for (Task<Integer> t : r.tasks) {
                    if (random.nextInt(3) == 0) {
                        run.whenDone(t).thenRun(() -> r.userCode(t.index(), 200, () -> null));
                    }
                }
                try {
                    run.await(Duration.ofSeconds(30));
                } catch (GraphRunException ex) {
                    throw new AssertionError("round " + round + " failed", ex);
                }
                violations.addAll(orderViolations(run.profile(), r, base));
            }
        }
        assertThat(violations).isEmpty();
    }

    @Test
    void aTaskDoesNotCountTheTimeABackendTookToDispatchItsSiblingOnTheSameWorker() throws Exception {
        long[] dispatched = {0};
        ScriptedBackend backend = new ScriptedBackend(1, (b, task) -> {
            long until = System.nanoTime() + 20_000_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            dispatched[0] = System.nanoTime();
            ScriptedBackend.runAndReport(b, task);
        });
        backend.inline = true;
        try (Scheduler scheduler = Scheduler.builder()
                .threads(1)
                .profiling(true)
                .gpuBackend(backend)
                .build()) {
            TaskGraph g = TaskGraph.named("siblings");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            g.task("gpu").after(a).gpu(ctx -> 2); // dispatched (20 ms) on the worker that ran a
            Task<Integer> c = g.task("c").after(a).cpu(ctx -> 3); // then run there, straight after
            GraphRun run = scheduler.submit(g);
            long base = System.nanoTime();
            run.await(Duration.ofSeconds(30));
            TaskTiming timing = run.profile().timing(c.index());
            assertThat(base + timing.startNanos())
                    .as("c's start, at the latest")
                    .isGreaterThanOrEqualTo(dispatched[0]);
        }
    }

    /**
     * What in {@code profile} breaks the dependency order: a start before the ready time, before a
     * dependency's end, or (surely, with the latest possible base) before user code about a
     * dependency returned.
     */
    private static List<String> orderViolations(RunProfile profile, Round round, long base) {
        AtomicLongArray userCodeEnd = round.userCodeEnd;
        List<String> out = new ArrayList<>();
        var topology = profile.topology();
        for (TaskTiming t : profile.tasks()) {
            if (!t.ran()) {
                continue;
            }
            String task = profile.graphName() + ": '" + t.taskName() + "' started ";
            long beforeDispatched = round.dispatchEnd.get(t.index()) - (base + t.startNanos());
            if (t.device() == Device.CPU && round.dispatchEnd.get(t.index()) != 0 && beforeDispatched > 0) {
                out.add(task + "on the CPU at least " + beforeDispatched
                        + " ns before the backend that sent it back returned");
            }
            if (t.startNanos() < t.readyNanos()) {
                out.add(task + (t.readyNanos() - t.startNanos()) + " ns before it was ready");
            }
            for (int k = topology.predecessorStart(t.index()); k < topology.predecessorEnd(t.index()); k++) {
                TaskTiming dep = profile.timing(topology.predecessor(k));
                if (t.startNanos() < dep.endNanos()) {
                    out.add(task + (dep.endNanos() - t.startNanos()) + " ns before its dependency '" + dep.taskName()
                            + "' ended");
                }
                long late = userCodeEnd.get(dep.index()) - (base + t.startNanos());
                if (userCodeEnd.get(dep.index()) != 0 && late > 0) {
                    out.add(task + "at least " + late + " ns before the user code about its dependency '"
                            + dep.taskName() + "' returned");
                }
            }
        }
        return out;
    }
}
