package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskTiming;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;

/**
 * Tasks added to a running run through the kernel's entry point ({@link DynamicTasks#spawn}), as
 * condition tasks, subflows, async tasks and pipelines will add them.
 */
class DynamicTasksTests {

    private static final Duration LONG = Duration.ofSeconds(60);

    /** A root body spawns N children and a join after all of them, which sums their results. */
    @Test
    void aBodySpawnsChildrenAndAJoinSumsTheirResults() throws Exception {
        int n = 1000;
        AtomicReference<DynamicTask<Long>> join = new AtomicReference<>();
        ConcurrentLinkedQueue<TaskEvent> seen = new ConcurrentLinkedQueue<>();
        TaskGraph g = TaskGraph.named("fan-out");
        g.task("root").cpu(ctx -> {
            List<DynamicTask<Integer>> children = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int v = i;
                children.add(DynamicTasks.spawn(ctx, "child[" + i + "]", c -> v));
            }
            join.set(DynamicTasks.spawn(
                    ctx,
                    "join",
                    c -> {
                        long sum = 0;
                        for (DynamicTask<Integer> child : children) {
                            sum += child.result();
                        }
                        return sum;
                    },
                    children.toArray(DynamicTask<?>[]::new)));
            return "spawned";
        });
        try (Scheduler s = Scheduler.builder().threads(4).listener(seen::add).build()) {
            GraphRun run = s.submit(g);
            run.await(LONG);
            assertThat(join.get().result()).isEqualTo((long) n * (n - 1) / 2);
            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(run.pendingTasks()).isZero();
            DynamicTasks dynamic = run.dynamic;
            assertThat(dynamic).isNotNull();
            assertThat(dynamic.size()).isEqualTo(n + 1);
            List<TaskTiming> timings = dynamic.timings();
            assertThat(timings).hasSize(n + 1).allSatisfy(t -> {
                assertThat(t.state()).isEqualTo(TaskState.SUCCEEDED);
                assertThat(t.ran()).isTrue();
                assertThat(t.startNanos()).isGreaterThanOrEqualTo(t.readyNanos());
                assertThat(t.endNanos()).isGreaterThanOrEqualTo(t.startNanos());
                assertThat(t.index()).isGreaterThanOrEqualTo(1);
            });
            TaskTiming joined = timings.stream()
                    .filter(t -> t.taskName().equals("join"))
                    .findFirst()
                    .orElseThrow();
            long lastChildEnd = timings.stream()
                    .filter(t -> !t.taskName().equals("join"))
                    .mapToLong(TaskTiming::endNanos)
                    .max()
                    .orElseThrow();
            assertThat(joined.startNanos()).isGreaterThanOrEqualTo(lastChildEnd);
            assertThat(seen)
                    .filteredOn(e -> "join".equals(e.taskName()))
                    .extracting(TaskEvent::type)
                    .containsSubsequence(EventType.TASK_READY, EventType.TASK_STARTED, EventType.TASK_SUCCEEDED);
            assertThat(seen)
                    .filteredOn(e -> e.type() == EventType.TASK_SUCCEEDED)
                    .hasSize(n + 2); // root, the children, the join
        }
    }

    /**
     * A recursive fan-out, fibonacci-like, tens of thousands of tasks added from bodies: each node
     * spawns its two children; a leaf is its own value; the second of two siblings to arrive adds
     * their parent's join after both values (one may be finishing just then), and arrives with it
     * at its own parent.
     */
    @Test
    void aRecursiveFanOutAddsTensOfThousandsOfTasksFromBodies() throws Exception {
        int n = 20; // 21,891 nodes and 10,945 joins
        AtomicReference<DynamicTask<Long>> value = new AtomicReference<>();
        AtomicInteger nodes = new AtomicInteger();
        TaskGraph g = TaskGraph.named("fib");
        g.task("root").cpu(ctx -> {
            Frame top = new Frame(null, 0, value);
            DynamicTasks.spawn(ctx, "fib(" + n + ")", node(n, top, 0, nodes));
            return null;
        });
        try (Scheduler s = Scheduler.builder().threads(4).build()) {
            GraphRun run = s.submit(g);
            run.await(LONG);
            assertThat(value.get().result()).isEqualTo(6765L);
            assertThat(nodes).hasValue(21891);
            assertThat(run.dynamic.size()).isEqualTo(21891 + 10945);
            assertThat(run.dynamic.timings())
                    .allSatisfy(t -> assertThat(t.state()).isEqualTo(TaskState.SUCCEEDED));
            assertThat(run.pendingTasks()).isZero();
        }
    }

    /** Where a node's value goes: the parent's two slots, and who arrives second adds the join. */
    private static final class Frame {
        final Frame parent;
        final int slot;
        final AtomicReference<DynamicTask<Long>> top;
        final AtomicReferenceArray<DynamicTask<Long>> values = new AtomicReferenceArray<>(2);
        final AtomicInteger arrived = new AtomicInteger();

        Frame(Frame parent, int slot, AtomicReference<DynamicTask<Long>> top) {
            this.parent = parent;
            this.slot = slot;
            this.top = top;
        }
    }

    @SuppressWarnings("unchecked")
    private static io.hts.engine.graph.TaskBody<Long> node(int k, Frame frame, int slot, AtomicInteger nodes) {
        return ctx -> {
            nodes.incrementAndGet();
            if (k < 2) {
                arrive(ctx, frame, slot, (DynamicTask<Long>) ctx); // a leaf is its own value
                return (long) k;
            }
            Frame f = new Frame(frame, slot, frame.top);
            DynamicTasks.spawn(ctx, "fib(" + (k - 1) + ")", node(k - 1, f, 0, nodes));
            DynamicTasks.spawn(ctx, "fib(" + (k - 2) + ")", node(k - 2, f, 1, nodes));
            return -1L; // its value is its join's
        };
    }

    private static void arrive(TaskContext ctx, Frame frame, int slot, DynamicTask<Long> v) {
        if (frame.parent == null) {
            frame.top.set(v);
            return;
        }
        frame.values.set(slot, v);
        if (frame.arrived.incrementAndGet() == 2) {
            DynamicTask<Long> a = frame.values.get(0);
            DynamicTask<Long> b = frame.values.get(1);
            DynamicTask<Long> join = DynamicTasks.spawn(ctx, "join", c -> a.result() + b.result(), a, b);
            arrive(ctx, frame.parent, frame.slot, join);
        }
    }

    /**
     * The classic race, thousands of times: an edge is added to a dependency that is finishing at
     * that moment (a dynamic one, and a static one), which succeeds or fails at random. Every task
     * ends in one final state, every run ends, a dependent runs once and only after its dependency
     * succeeded, and is cancelled when it failed.
     */
    @Test
    void anEdgeAddedToADependencyThatIsFinishingIsDecidedOnce() throws Exception {
        int rounds = 3000;
        try (Scheduler s = Scheduler.builder().threads(4).build()) {
            for (int round = 0; round < rounds; round++) {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                boolean dynamicFails = rnd.nextInt(4) == 0;
                boolean staticFails = rnd.nextInt(4) == 0;
                int spinA = rnd.nextInt(2000);
                int spinAdd = rnd.nextInt(2000);
                int spinOther = rnd.nextInt(4000);
                AtomicInteger bRuns = new AtomicInteger();
                AtomicInteger cRuns = new AtomicInteger();
                AtomicReference<String> wrong = new AtomicReference<>();
                AtomicReference<DynamicTask<Integer>> aRef = new AtomicReference<>();
                AtomicReference<DynamicTask<Integer>> bRef = new AtomicReference<>();
                AtomicReference<DynamicTask<Integer>> cRef = new AtomicReference<>();
                TaskGraph g = TaskGraph.named("race-" + round);
                Task<Integer> other = g.task("other").cpu(ctx -> {
                    spin(spinOther);
                    if (staticFails) {
                        throw new IOException("other failed");
                    }
                    return 7;
                });
                int otherIndex = other.index();
                g.task("root").cpu(ctx -> {
                    DynamicTask<Integer> a = DynamicTasks.spawn(ctx, "a", c -> {
                        spin(spinA);
                        if (dynamicFails) {
                            throw new IOException("a failed");
                        }
                        return 1;
                    });
                    aRef.set(a);
                    spin(spinAdd);
                    bRef.set(DynamicTasks.spawn(
                            ctx,
                            "b",
                            c -> {
                                bRuns.incrementAndGet();
                                if (a.state() != TaskState.SUCCEEDED) {
                                    wrong.set("b ran while a is " + a.state());
                                }
                                return a.result() + 1;
                            },
                            a));
                    cRef.set(DynamicTasks.spawn(
                            ctx,
                            "c",
                            c -> {
                                cRuns.incrementAndGet();
                                return c.input(other) + 1; // throws if 'other' is not a dependency
                            },
                            List.of(),
                            otherIndex));
                    return 0;
                });
                GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
                try {
                    run.await(LONG);
                } catch (GraphRunException expected) {
                    assertThat(dynamicFails || staticFails)
                            .as("round %d", round)
                            .isTrue();
                }
                assertThat(run.isDone()).isTrue();
                assertThat(wrong.get()).as("round %d", round).isNull();
                DynamicTask<Integer> a = aRef.get();
                DynamicTask<Integer> b = bRef.get();
                DynamicTask<Integer> c = cRef.get();
                assertThat(a.state()).isEqualTo(dynamicFails ? TaskState.FAILED : TaskState.SUCCEEDED);
                if (dynamicFails) {
                    assertThat(b.state()).as("round %d", round).isEqualTo(TaskState.CANCELLED);
                    assertThat(b.error()).hasMessageContaining("'a' failed");
                    assertThat(bRuns).hasValue(0);
                } else {
                    assertThat(b.state()).as("round %d", round).isEqualTo(TaskState.SUCCEEDED);
                    assertThat(b.result()).isEqualTo(2);
                    assertThat(bRuns).hasValue(1);
                }
                if (staticFails) {
                    assertThat(c.state()).as("round %d", round).isEqualTo(TaskState.CANCELLED);
                    assertThat(c.error()).hasMessageContaining("'other' failed");
                    assertThat(cRuns).hasValue(0);
                } else {
                    assertThat(c.state()).as("round %d", round).isEqualTo(TaskState.SUCCEEDED);
                    assertThat(c.result()).isEqualTo(8);
                    assertThat(cRuns).hasValue(1);
                }
                assertThat(run.pendingTasks()).isZero();
                assertThat(run.status())
                        .isEqualTo(dynamicFails || staticFails ? RunStatus.FAILED : RunStatus.SUCCEEDED);
            }
        }
    }

    /**
     * A failing dynamic task cancels its dynamic descendants, and fails a fail-fast run with its
     * failure as the cause; a running independent body sees the stop.
     */
    @Test
    void aFailingDynamicTaskCancelsItsDescendantsAndFailsTheRun() throws Exception {
        IOException boom = new IOException("boom");
        CountDownLatch independentRunning = new CountDownLatch(1);
        AtomicReference<DynamicTask<?>> a = new AtomicReference<>();
        AtomicReference<DynamicTask<?>> b = new AtomicReference<>();
        AtomicReference<DynamicTask<?>> c = new AtomicReference<>();
        AtomicReference<DynamicTask<?>> d = new AtomicReference<>();
        AtomicInteger ranAfter = new AtomicInteger();
        TaskGraph g = TaskGraph.named("fails");
        g.task("root").cpu(ctx -> {
            d.set(DynamicTasks.spawn(ctx, "independent", x -> {
                independentRunning.countDown();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!x.isCancelled() && System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                return "saw the stop";
            }));
            independentRunning.await(10, TimeUnit.SECONDS);
            DynamicTask<Object> failing = DynamicTasks.spawn(ctx, "a", x -> {
                throw boom;
            });
            a.set(failing);
            DynamicTask<Integer> second = DynamicTasks.spawn(
                    ctx,
                    "b",
                    x -> {
                        ranAfter.incrementAndGet();
                        return 1;
                    },
                    failing);
            b.set(second);
            c.set(DynamicTasks.spawn(
                    ctx,
                    "c",
                    x -> {
                        ranAfter.incrementAndGet();
                        return 2;
                    },
                    second));
            return null;
        });
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(LONG))
                    .isInstanceOf(GraphRunException.class)
                    .hasCause(boom)
                    .satisfies(ex -> {
                        GraphRunException r = (GraphRunException) ex;
                        assertThat(r.status()).isEqualTo(RunStatus.FAILED);
                        assertThat(r.failures())
                                .extracting(TaskFailure::taskName)
                                .containsExactly("a");
                        assertThat(r.cancelled()).contains("b", "c");
                    });
            assertThat(a.get().state()).isEqualTo(TaskState.FAILED);
            assertThat(a.get().error()).isSameAs(boom);
            for (DynamicTask<?> t : List.of(b.get(), c.get())) {
                assertThat(t.state()).isEqualTo(TaskState.CANCELLED);
                assertThat(t.error())
                        .isInstanceOf(TaskCancelledException.class)
                        .hasMessageContaining("'a' failed")
                        .hasCause(boom);
            }
            assertThat(ranAfter).hasValue(0);
            assertThat(d.get().state()).isEqualTo(TaskState.SUCCEEDED); // a running body finishes, as static ones do
            assertThat(d.get().result()).isEqualTo("saw the stop");
            assertThat(run.pendingTasks()).isZero();
        }
    }

    /** With CONTINUE, a failure cancels its descendants only; other dynamic tasks go on. */
    @Test
    void underContinueAFailureCancelsItsDescendantsOnly() throws Exception {
        AtomicReference<DynamicTask<?>> b = new AtomicReference<>();
        AtomicReference<DynamicTask<Integer>> other = new AtomicReference<>();
        TaskGraph g = TaskGraph.named("continues");
        Task<String> root = g.task("root").cpu(ctx -> {
            DynamicTask<Object> a = DynamicTasks.spawn(ctx, "a", x -> {
                throw new IllegalArgumentException("bad");
            });
            b.set(DynamicTasks.spawn(ctx, "b", x -> 1, a));
            DynamicTask<Integer> o1 = DynamicTasks.spawn(ctx, "o1", x -> 20);
            other.set(DynamicTasks.spawn(ctx, "o2", x -> o1.result() + 1, o1));
            return "r";
        });
        g.task("after-root").after(root).cpu(ctx -> ctx.input(root) + "!");
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.submit(g, RunOptions.failureMode(FailureMode.CONTINUE));
            assertThatThrownBy(() -> run.await(LONG)).isInstanceOf(GraphRunException.class);
            assertThat(b.get().state()).isEqualTo(TaskState.CANCELLED);
            assertThat(other.get().result()).isEqualTo(21);
            assertThat(run.states()).containsEntry("after-root", TaskState.SUCCEEDED);
            assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        }
    }

    /** One dynamic task cancelled: a running one is interrupted and ends CANCELLED, its dependents with it. */
    @Test
    void cancellingOneDynamicTaskCancelsItAndItsDependents() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<DynamicTask<?>> sleeper = new AtomicReference<>();
        AtomicReference<DynamicTask<?>> dependent = new AtomicReference<>();
        AtomicReference<DynamicTask<?>> queued = new AtomicReference<>();
        AtomicReference<DynamicTask<?>> queuedDependent = new AtomicReference<>();
        AtomicReference<DynamicTask<?>> independent = new AtomicReference<>();
        TaskGraph g = TaskGraph.named("cancel-one");
        g.task("root").cpu(ctx -> {
            DynamicTask<String> z = DynamicTasks.spawn(ctx, "sleeper", x -> {
                running.countDown();
                new CountDownLatch(1).await(); // never counted down: only the cancel's interrupt ends it
                return "slept";
            });
            sleeper.set(z);
            dependent.set(DynamicTasks.spawn(ctx, "dependent", x -> 1, z));
            DynamicTask<Boolean> gate = DynamicTasks.spawn(ctx, "gate", x -> release.await(10, TimeUnit.SECONDS));
            DynamicTask<Integer> q = DynamicTasks.spawn(ctx, "queued", x -> 2, gate);
            queued.set(q);
            queuedDependent.set(DynamicTasks.spawn(ctx, "queued-dependent", x -> 3, q));
            independent.set(DynamicTasks.spawn(ctx, "independent", x -> 4, gate));
            return null;
        });
        try (Scheduler s = Scheduler.builder().threads(3).build()) {
            GraphRun run = s.submit(g);
            assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
            while (queued.get() == null || independent.get() == null) {
                Thread.onSpinWait();
            }
            assertThat(queued.get().cancel()).isTrue(); // CREATED: cancelled at once, with its dependent
            assertThat(queued.get().state()).isEqualTo(TaskState.CANCELLED);
            assertThat(queuedDependent.get().state()).isEqualTo(TaskState.CANCELLED);
            assertThat(sleeper.get().cancel()).isTrue(); // RUNNING: interrupted
            release.countDown();
            assertThatThrownBy(() -> run.await(LONG)).isInstanceOf(GraphRunException.class);
            assertThat(sleeper.get().state()).isEqualTo(TaskState.CANCELLED);
            assertThat(sleeper.get().error()).isInstanceOf(TaskCancelledException.class);
            assertThat(dependent.get().state()).isEqualTo(TaskState.CANCELLED);
            assertThat(independent.get().state()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(sleeper.get().cancel()).isFalse();
            assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        }
    }

    /**
     * {@code run.cancel()} at random moments while bodies keep adding tasks: the run ends, every
     * task is final, and an add that begins after the adder saw the stop is refused.
     */
    @Test
    void cancellingTheRunWhileBodiesAddTasksEndsIt() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(4).build()) {
            for (int round = 0; round < 200; round++) {
                AtomicInteger refused = new AtomicInteger();
                AtomicInteger refusedWrongly = new AtomicInteger();
                AtomicInteger addedAfterStopSeen = new AtomicInteger();
                AtomicReference<Throwable> odd = new AtomicReference<>();
                ConcurrentLinkedQueue<DynamicTask<?>> added = new ConcurrentLinkedQueue<>();
                TaskGraph g = TaskGraph.named("cancel-" + round);
                g.task("root").cpu(ctx -> {
                    spawnTree(ctx, 14, added, refused, refusedWrongly, addedAfterStopSeen, odd);
                    return null;
                });
                GraphRun run = s.submit(g);
                spinMicros(ThreadLocalRandom.current().nextInt(1000)); // the cancel at a random moment
                if (ThreadLocalRandom.current().nextBoolean()) {
                    spinMicros(ThreadLocalRandom.current().nextInt(3000));
                }
                boolean cancelled = run.cancel();
                try {
                    run.await(LONG);
                    assertThat(cancelled).isFalse();
                } catch (GraphRunException ex) {
                    assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED);
                }
                assertThat(odd.get()).as("round %d", round).isNull();
                assertThat(addedAfterStopSeen)
                        .as("an add after the stop was seen returned")
                        .hasValue(0);
                assertThat(refusedWrongly).hasValue(0);
                assertThat(run.pendingTasks()).isZero();
                assertThat(run.isDone()).isTrue();
                DynamicTasks dynamic = run.dynamic;
                if (dynamic != null) {
                    assertThat(dynamic.size()).isEqualTo(added.size());
                    for (int p = 0; p < dynamic.size(); p++) {
                        assertThat(dynamic.task(p).state().isTerminal())
                                .as("round %d task %s", round, dynamic.task(p))
                                .isTrue();
                    }
                }
                if (cancelled) {
                    assertThat(added).noneMatch(t -> t.state() == TaskState.CREATED || t.state() == TaskState.READY);
                    // every add after the run finished (each body had already been counted out) is refused
                    assertThatThrownBy(() -> DynamicTasks.of(run).add(null, "late", x -> 1, List.of()))
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("run " + run.runId());
                }
            }
        }
    }

    private static void spawnTree(
            TaskContext ctx,
            int depth,
            ConcurrentLinkedQueue<DynamicTask<?>> added,
            AtomicInteger refused,
            AtomicInteger refusedWrongly,
            AtomicInteger addedAfterStopSeen,
            AtomicReference<Throwable> odd) {
        if (depth == 0) {
            spinMicros(5);
            return;
        }
        DynamicTask<?> previous = null;
        for (int k = 0; k < 2; k++) {
            GraphRun run = ctx instanceof DynamicTask<?> d ? d.run : ((TaskExecution) ctx).run;
            boolean stopSeen = run.state.stopCause() != null;
            try {
                List<DynamicTask<?>> after = previous == null ? List.of() : List.of(previous);
                DynamicTask<Object> t = DynamicTasks.spawn(
                        ctx,
                        "node-" + depth + "-" + k,
                        x -> {
                            spawnTree(x, depth - 1, added, refused, refusedWrongly, addedAfterStopSeen, odd);
                            return null;
                        },
                        after);
                added.add(t);
                if (stopSeen) {
                    addedAfterStopSeen.incrementAndGet();
                }
                previous = k == 0 && ThreadLocalRandom.current().nextBoolean() ? t : null;
            } catch (TaskCancelledException ex) {
                refused.incrementAndGet();
                if (run.state.stopCause() == null) {
                    refusedWrongly.incrementAndGet();
                }
                if (!ex.getMessage().contains("run " + run.runId())
                        || !ex.getMessage().contains("'node-")) {
                    odd.compareAndSet(null, ex);
                }
                return; // a body that lets it through ends CANCELLED; this one stops adding
            } catch (Throwable ex) {
                odd.compareAndSet(null, ex);
                return;
            }
        }
    }

    /** An add after the run finished throws, naming the run and the task; a static run never makes the table. */
    @Test
    void addingAfterTheRunFinishedThrowsNamingTheRun() throws Exception {
        AtomicReference<TaskContext> leaked = new AtomicReference<>();
        AtomicReference<TaskContext> leakedDynamic = new AtomicReference<>();
        TaskGraph g = TaskGraph.named("finished");
        g.task("root").cpu(ctx -> {
            leaked.set(ctx);
            DynamicTasks.spawn(ctx, "child", x -> {
                leakedDynamic.set(x);
                return 1;
            });
            return null;
        });
        TaskGraph plain = TaskGraph.named("plain");
        plain.task("only").cpu(ctx -> 1);
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.submit(g).await(LONG);
            for (TaskContext ctx : List.of(leaked.get(), leakedDynamic.get())) {
                assertThatThrownBy(() -> DynamicTasks.spawn(ctx, "late", x -> 1))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("run " + run.runId() + " of graph 'finished' has finished (SUCCEEDED)")
                        .hasMessageContaining("'late'");
            }
            assertThatThrownBy(() -> DynamicTasks.of(run).add(null, "late", x -> 1, List.of()))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("run " + run.runId())
                    .hasMessageContaining("'late'");
            assertThat(run.dynamic.size()).isEqualTo(1);
            assertThat(run.pendingTasks()).isZero();
            GraphRun staticRun = s.submit(plain).await(LONG);
            assertThat(staticRun.dynamic).isNull();
        }
    }

    /** A dynamic task may wait on static tasks by index and read their results; not on tasks of another run. */
    @Test
    void aDynamicTaskReadsItsStaticDependencies() throws Exception {
        CountDownLatch slowGate = new CountDownLatch(1);
        AtomicReference<DynamicTask<Integer>> sum = new AtomicReference<>();
        AtomicReference<Throwable> foreign = new AtomicReference<>();
        Map<String, Object> other = new ConcurrentHashMap<>();
        TaskGraph g = TaskGraph.named("static-deps");
        Task<Integer> slow = g.task("slow").cpu(ctx -> {
            slowGate.await(10, TimeUnit.SECONDS);
            return 40;
        });
        Task<Integer> fast = g.task("fast").cpu(ctx -> 2);
        g.task("root").cpu(ctx -> {
            sum.set(DynamicTasks.spawn(
                    ctx, "sum", x -> x.input(slow) + x.input(fast), List.of(), slow.index(), fast.index()));
            slowGate.countDown();
            DynamicTask<?> mine = DynamicTasks.spawn(ctx, "mine", x -> 0);
            other.put("mine", mine);
            return null;
        });
        TaskGraph g2 = TaskGraph.named("other");
        g2.task("t").cpu(ctx -> {
            try {
                DynamicTasks.spawn(ctx, "x", x -> 0, (DynamicTask<?>) other.get("mine"));
            } catch (IllegalArgumentException ex) {
                foreign.set(ex);
            }
            return 0;
        });
        try (Scheduler s = Scheduler.builder().threads(3).build()) {
            GraphRun run = s.submit(g);
            run.await(LONG);
            assertThat(sum.get().result()).isEqualTo(42);
            s.submit(g2).await(LONG);
            assertThat(foreign.get()).hasMessageContaining("its own run");
        }
    }

    /**
     * In a graph with GPU bodies, whose releasable results are released once their static readers
     * are done, a dynamic task may not depend on static tasks (it is not counted as a reader yet).
     */
    @Test
    void aDynamicTaskMayNotReadTheReleasableResultsOfAGpuGraph() throws Exception {
        AtomicReference<Throwable> refused = new AtomicReference<>();
        TaskGraph g = TaskGraph.named("gpu-graph");
        Task<Integer> both = g.task("both").bodies(ctx -> 1, ctx -> 1);
        g.task("root").after(both).cpu(ctx -> {
            try {
                DynamicTasks.spawn(ctx, "reader", x -> x.input(both), List.of(), both.index());
            } catch (IllegalArgumentException ex) {
                refused.set(ex);
            }
            return DynamicTasks.spawn(ctx, "no-static-dependency", x -> 2).name;
        });
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.submit(g).await(LONG);
            assertThat(refused.get()).hasMessageContaining("'reader'").hasMessageContaining("not supported yet");
            assertThat(run.dynamic.size()).isEqualTo(1);
        }
    }

    private static void spin(int nanos) {
        long until = System.nanoTime() + nanos;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    private static void spinMicros(int micros) {
        spin(micros * 1000);
    }
}
