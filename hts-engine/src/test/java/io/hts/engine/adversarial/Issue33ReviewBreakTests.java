package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 33, third review: attacks through the public API only on the nested-wait cancel, the
 * engine's interrupts, profile order, priority and batched counts.
 */
@Timeout(120)
class Issue33ReviewBreakTests {

    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(10);

    // ---------------------------------------------------------------- batched counts (promise 5)

    /**
     * A body of run B waits for a run of another scheduler ({@code run.await()} helps its own
     * pool meanwhile). While it helps, its one worker runs run A's only task, which lets the
     * awaited run end. The body's wait returns, the body returns, and a {@code whenDone} stage of
     * B's task (user code of run B, on that worker) waits for run A's future: every task of A is
     * final, so A must end.
     */
    @Test
    void aRunsCountFromATaskHelpedDuringAWaitReachesItBeforeTheWaiterResumes() throws Exception {
        AtomicReference<String> inBody = new AtomicReference<>("not reached");
        AtomicReference<String> inStage = new AtomicReference<>("not reached");
        try (Scheduler other = Scheduler.builder().threads(1).build();
                Scheduler scheduler = Scheduler.builder().threads(1).build()) {
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph n = TaskGraph.named("n");
            n.task("n1").cpu(ctx -> release.await(10, TimeUnit.SECONDS));
            GraphRun nested = other.submit(n);

            AtomicReference<GraphRun> runA = new AtomicReference<>();
            CountDownLatch bStarted = new CountDownLatch(1);
            CountDownLatch aQueued = new CountDownLatch(1);
            TaskGraph b = TaskGraph.named("b");
            Task<Integer> b1 = b.task("b1").cpu(ctx -> {
                bStarted.countDown();
                aQueued.await(10, TimeUnit.SECONDS);
                nested.await(Duration.ofSeconds(10)); // helps: runs a1
                inBody.set(waitFor(runA.get()));
                return 1;
            });
            TaskGraph a = TaskGraph.named("a");
            a.task("a1").cpu(ctx -> {
                release.countDown();
                long deadline = System.nanoTime() + BOUND_NANOS;
                while (!nested.isDone() && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // so the helper finds the awaited run done as a1 returns
                }
                return 1;
            });
            GraphRun runB = scheduler.submit(b);
            runB.whenDone(b1).thenRun(() -> inStage.set(waitFor(runA.get())));
            assertThat(bStarted.await(10, TimeUnit.SECONDS)).isTrue();
            runA.set(scheduler.submit(a));
            aQueued.countDown();
            runB.await(Duration.ofSeconds(30));
            runA.get().await(Duration.ofSeconds(30));
        }
        assertThat(inBody.get()).as("run A seen by B's body after its wait").isEqualTo("a done");
        assertThat(inStage.get()).as("run A seen by a whenDone stage of B").isEqualTo("a done");
    }

    private static String waitFor(GraphRun run) {
        try {
            run.future().get(3, TimeUnit.SECONDS); // blocks, does not help
            return "a done";
        } catch (TimeoutException ex) {
            return "a not done after 3 s, pending " + run.pendingTasks() + ", states " + run.states();
        } catch (Exception ex) {
            return "a failed: " + ex;
        }
    }

    // ---------------------------------------------------------------- nested cancel (promise 1, 2)

    /**
     * Three levels of {@code ctx.execute}: the leaves ignore interrupts and spin until they see
     * {@code ctx.isCancelled()}; every level after its wait blocks interruptibly, so an interrupt
     * the engine sent and lost shows as a body blocked for its whole bound. Cancels of the run,
     * the top task and the top group land at random moments (as the bodies enter the wait, inside
     * it, as they leave it), some racing a time-out of the top task (the variant with a listener that
     * throws is {@link #aThrowingListenerDoesNotLoseTheInterruptOfACancelledNestedWait}).
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void cancellingANestedWaitAtAnyMomentEndsEveryRun(int workers) throws Exception {
        nestedRounds(workers, -1, false);
    }

    /**
     * The rounds above with a listener that throws on every event (documented as harmless: "a
     * listener that throws ... is isolated"): cancels of the run, the task and the group, and
     * time-outs racing a cancel. Before its fix, a body whose nested wait was cancelled saw
     * {@code isCancelled()} but was never interrupted, on 1, 2 and 4 workers (e.g. "round 66: a
     * body at depth 1 saw isCancelled() but was never interrupted (depth 1, quick leaves false,
     * how 0)"): the engine counted its interrupt just before a listener on the body's thread (its
     * nested run's RUN_SUBMITTED) read the count, and sent it just after the listener read the
     * flag, which the listener's guard then cleared as the listener's own. Any listener did it;
     * without one, no listener ran there.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void aThrowingListenerDoesNotLoseTheInterruptOfACancelledNestedWait(int workers) throws Exception {
        for (int how = 0; how < 4; how++) {
            nestedRounds(workers, how, true);
        }
    }

    /** The same, with only time-outs of the top task racing a cancel of its run. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void aTimeOutRacingACancelOfANestedWaitEndsEveryWait(int workers) throws Exception {
        nestedRounds(workers, 3, false);
    }

    /** The same, with only cancels (of the run, the task or the group), no time-out. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4})
    void cancelsOfANestedWaitWithoutTimeOutsEndEveryWait(int workers) throws Exception {
        nestedRounds(workers, 0, false);
        nestedRounds(workers, 1, false);
        nestedRounds(workers, 2, false);
    }

    private static void nestedRounds(int workers, int onlyHow, boolean throwingListener) throws Exception {
        SplittableRandom random = new SplittableRandom(33L * workers + onlyHow);
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        TaskListener throwing = event -> {
            throw new IllegalStateException("listener fails on " + event.type());
        };
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(onlyHow < 0 ? 2 : 1);
        int rounds = 0;
        var builder = Scheduler.builder().threads(workers);
        if (throwingListener) {
            builder.listener(throwing);
        }
        Scheduler scheduler = builder.build();
        try {
            while (System.nanoTime() < until && problems.isEmpty()) {
                rounds++;
                NestedRound round = new NestedRound(scheduler, random.split(), problems, rounds, onlyHow);
                round.run();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                while (round.exited.get() < round.entered.get() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                if (round.exited.get() < round.entered.get()) {
                    StringBuilder active = new StringBuilder();
                    scheduler
                            .activeRuns()
                            .forEach(r ->
                                    active.append("\n  ").append(r).append(": ").append(r.diagnose()));
                    problems.add("round " + rounds + " (" + round.describe() + ", moment " + round.moment + "): "
                            + (round.entered.get() - round.exited.get()) + " of " + round.entered.get()
                            + " waiting bodies never returned; active runs:" + active);
                }
            }
        } finally {
            Thread closer = new Thread(scheduler::close, "closer");
            closer.setDaemon(true);
            closer.start();
            closer.join(TimeUnit.SECONDS.toMillis(20));
            if (closer.isAlive()) {
                problems.add("close() did not return within 20 s");
            }
        }
        assertThat(problems)
                .as("problems in %d rounds on %d workers", rounds, workers)
                .isEmpty();
    }

    private static final class NestedRound {
        final Scheduler scheduler;
        final SplittableRandom random;
        final List<String> problems;
        final int round;
        final int depth;
        final boolean quickLeaves;
        final int how; // 0 run, 1 task, 2 group, 3 time-out racing a run cancel
        final AtomicInteger entered = new AtomicInteger();
        final AtomicInteger exited = new AtomicInteger();
        final AtomicBoolean leafStarted = new AtomicBoolean();
        volatile int moment;

        NestedRound(Scheduler scheduler, SplittableRandom random, List<String> problems, int round, int onlyHow) {
            this.scheduler = scheduler;
            this.random = random;
            this.problems = problems;
            this.round = round;
            this.depth = 1 + random.nextInt(3);
            this.quickLeaves = random.nextBoolean();
            int h = random.nextInt(4);
            this.how = onlyHow >= 0 ? onlyHow : h;
        }

        TaskGraph level(int d) {
            TaskGraph g = TaskGraph.named("level" + d);
            if (d > depth) {
                g.task("leaf").cpu(ctx -> {
                    leafStarted.set(true);
                    if (quickLeaves) {
                        return 0;
                    }
                    long deadline = System.nanoTime() + BOUND_NANOS;
                    while (!ctx.isCancelled()) { // ignores interrupts
                        Thread.interrupted();
                        if (System.nanoTime() > deadline) {
                            problems.add("round " + round + ": a leaf at depth " + d + " never saw the cancel");
                            return 0;
                        }
                        Thread.onSpinWait();
                    }
                    return 0;
                });
                return g;
            }
            g.task("wait").cpu(ctx -> waitingBody(ctx, d));
            return g;
        }

        int waitingBody(io.hts.engine.graph.TaskContext ctx, int d) {
            entered.incrementAndGet();
            try {
                return waitingBodyIn(ctx, d);
            } finally {
                exited.incrementAndGet();
            }
        }

        int waitingBodyIn(io.hts.engine.graph.TaskContext ctx, int d) {
            String wait;
            try {
                ctx.execute(level(d + 1));
                wait = "its nested run succeeded";
            } catch (RuntimeException expected) {
                wait = "its nested run threw " + expected.getClass().getSimpleName();
            }
            if (!ctx.isCancelled()) {
                return 0; // the cancel came too late for this body
            }
            long t0 = System.nanoTime();
            try {
                new CountDownLatch(1).await(10, TimeUnit.SECONDS);
                problems.add("round " + round + ": a body at depth " + d
                        + " saw isCancelled() but was never interrupted in 10 s (" + describe() + ", moment " + moment
                        + ", " + wait + ")");
            } catch (InterruptedException interrupted) {
                // the engine's interrupt
            }
            return (int) Math.min(1, System.nanoTime() - t0);
        }

        String describe() {
            return "depth " + depth + ", quick leaves " + quickLeaves + ", how " + how;
        }

        void run() throws Exception {
            TaskGraph top = TaskGraph.named("top");
            TaskGroup<Integer> group;
            Task<Integer> task;
            if (how == 2) {
                group = top.group("w", 2, (i, t) -> t.cpu(ctx -> waitingBody(ctx, 1)));
                task = null;
            } else {
                group = null;
                var builder = top.task("w");
                if (how == 3) {
                    builder.timeout(Duration.ofMillis(1 + random.nextInt(3)));
                }
                task = builder.cpu(ctx -> waitingBody(ctx, 1));
            }
            top.task("side").cpu(ctx -> 1);
            GraphRun run = scheduler.submit(top);
            int moment = random.nextInt(4);
            this.moment = moment;
            long deadline = System.nanoTime() + BOUND_NANOS;
            if (moment == 1) {
                while (entered.get() == 0 && System.nanoTime() < deadline && !run.isDone()) {
                    Thread.onSpinWait();
                }
            } else if (moment == 2) {
                while (entered.get() < depth && !leafStarted.get() && System.nanoTime() < deadline && !run.isDone()) {
                    Thread.onSpinWait();
                }
            } else if (moment == 3) {
                while (!leafStarted.get() && System.nanoTime() < deadline && !run.isDone()) {
                    Thread.onSpinWait();
                }
            }
            int spins = random.nextInt(2000);
            for (int i = 0; i < spins; i++) {
                Thread.onSpinWait();
            }
            switch (how) {
                case 1 -> run.cancel(task);
                case 2 -> run.cancel(group);
                default -> run.cancel();
            }
            try {
                run.await(Duration.ofSeconds(15));
            } catch (TimeoutException ex) {
                problems.add("round " + round + ": the run never ended (" + describe() + ", moment " + moment + "): "
                        + run.diagnose());
                run.cancel();
            } catch (RuntimeException failedOrCancelled) {
                // expected
            }
        }
    }

    /**
     * The plainest case of the break above: one worker, one level; a listener throws on every
     * event. The body waits in {@code ctx.execute} for a nested leaf that spins until it sees the
     * cancel; the test cancels the run once the leaf runs. The nested run ends, {@code execute}
     * throws, the body sees {@code ctx.isCancelled()} and blocks interruptibly: the engine's
     * interrupt, kept during the wait, must be given back.
     */
    @ParameterizedTest
    @ValueSource(strings = {"throws", "quiet"})
    void anEnginesInterruptKeptDuringANestedWaitSurvivesAListenerThatThrows(String listenerKind) throws Exception {
        List<String> outcomes = Collections.synchronizedList(new ArrayList<>());
        TaskListener listener = event -> {
            if (listenerKind.equals("throws")) {
                throw new IllegalStateException("listener fails on " + event.type());
            }
        };
        try (Scheduler scheduler =
                Scheduler.builder().threads(1).listener(listener).build()) {
            for (int round = 0; round < 60; round++) {
                CountDownLatch leafRuns = new CountDownLatch(1);
                TaskGraph nested = TaskGraph.named("nested");
                nested.task("leaf").cpu(ctx -> {
                    leafRuns.countDown();
                    long deadline = System.nanoTime() + BOUND_NANOS;
                    while (!ctx.isCancelled() && System.nanoTime() < deadline) {
                        Thread.onSpinWait(); // ignores the interrupt, sees the cancel
                    }
                    return 1;
                });
                TaskGraph top = TaskGraph.named("top");
                top.task("w").cpu(ctx -> {
                    try {
                        ctx.execute(nested);
                    } catch (RuntimeException expected) {
                        // cancelled
                    }
                    try {
                        new CountDownLatch(1).await(5, TimeUnit.SECONDS);
                        outcomes.add("not interrupted (cancelled: " + ctx.isCancelled() + ")");
                    } catch (InterruptedException interrupted) {
                        outcomes.add("interrupted");
                    }
                    return 1;
                });
                top.task("side").cpu(ctx -> 1);
                GraphRun run = scheduler.submit(top);
                assertThat(leafRuns.await(10, TimeUnit.SECONDS)).isTrue();
                run.cancel();
                try {
                    run.await(Duration.ofSeconds(20));
                } catch (RuntimeException expected) {
                    // cancelled
                }
                if (!outcomes.get(outcomes.size() - 1).equals("interrupted")) {
                    break;
                }
            }
        }
        assertThat(outcomes)
                .as("what the body's blocking wait after its nested wait saw")
                .containsOnly("interrupted");
    }

    /**
     * The task is cancelled before its body calls {@code ctx.execute}: the body ignores the
     * interrupt and calls it anyway, with a nested graph whose only body waits until it is
     * cancelled. The nested run belongs to the cancelled task, so it must be cancelled too.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void aNestedRunStartedAfterItsTaskWasCancelledIsCancelled(int workers) throws Exception {
        AtomicReference<String> seen = new AtomicReference<>("not reached");
        try (Scheduler scheduler = Scheduler.builder().threads(workers).build()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch cancelled = new CountDownLatch(1);
            TaskGraph nested = TaskGraph.named("nested");
            Task<String> leaf = nested.task("leaf").cpu(ctx -> {
                long deadline = System.nanoTime() + BOUND_NANOS;
                while (!ctx.isCancelled() && System.nanoTime() < deadline) {
                    Thread.interrupted();
                    Thread.onSpinWait();
                }
                return ctx.isCancelled() ? "cancelled" : "never cancelled";
            });
            TaskGraph top = TaskGraph.named("top");
            Task<String> w = top.task("w").cpu(ctx -> {
                started.countDown();
                long deadline = System.nanoTime() + BOUND_NANOS;
                while (cancelled.getCount() > 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // ignores the interrupt
                }
                Thread.interrupted(); // ignores the interrupt
                try {
                    seen.set("execute returned " + ctx.execute(nested).result(leaf));
                } catch (RuntimeException ex) {
                    seen.set("execute threw " + ex.getClass().getSimpleName());
                }
                return "done";
            });
            GraphRun run = scheduler.submit(top);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            run.cancel(w);
            cancelled.countDown();
            try {
                run.await(Duration.ofSeconds(20));
            } catch (RuntimeException expected) {
                // cancelled
            }
        }
        assertThat(seen.get()).startsWith("execute threw");
    }

    /**
     * A body's own interrupt flag is kept across its nested wait and reaches no task run inside
     * it; an interrupt sent to it by the engine while it waits is given back after.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void aBodysOwnInterruptIsKeptAcrossItsWaitAndReachesNoNestedTask(int workers) throws Exception {
        ConcurrentLinkedQueue<String> seenInside = new ConcurrentLinkedQueue<>();
        AtomicReference<String> after = new AtomicReference<>("not reached");
        try (Scheduler scheduler = Scheduler.builder().threads(workers).build()) {
            TaskGraph nested = TaskGraph.named("nested");
            for (int i = 0; i < 8; i++) {
                nested.task("n" + i).cpu(ctx -> {
                    if (Thread.currentThread().isInterrupted()) {
                        seenInside.add(ctx.taskName());
                    }
                    return 1;
                });
            }
            TaskGraph top = TaskGraph.named("top");
            top.task("w").cpu(ctx -> {
                Thread.currentThread().interrupt();
                ctx.execute(nested);
                after.set("interrupted after: " + Thread.currentThread().isInterrupted());
                Thread.interrupted();
                return 1;
            });
            scheduler.execute(top);
        }
        assertThat(seenInside).as("nested tasks that began interrupted").isEmpty();
        assertThat(after.get()).isEqualTo("interrupted after: true");
    }

    // ---------------------------------------------------------------- priority (promise 4)

    /**
     * One worker is inside a body that waits for a nested run of normal tasks; urgent tasks of
     * another run are queued before the wait begins. "Whenever a worker picks its next task, a
     * task queued in the priority lane is taken before any normal task ... whichever run either
     * belongs to": the helping worker must start the urgent tasks before the nested normal ones.
     */
    @Test
    void aHelpingWorkerPicksQueuedUrgentTasksBeforeTheNestedRunsNormalOnes() throws Exception {
        ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
        try (Scheduler scheduler = Scheduler.builder().threads(1).build()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch urgentQueued = new CountDownLatch(1);
            TaskGraph nested = TaskGraph.named("nested");
            for (int i = 0; i < 4; i++) {
                nested.task("n" + i).cpu(ctx -> order.add("n"));
            }
            TaskGraph top = TaskGraph.named("top");
            top.task("w").cpu(ctx -> {
                started.countDown();
                urgentQueued.await(10, TimeUnit.SECONDS);
                ctx.execute(nested);
                return 1;
            });
            TaskGraph urgent = TaskGraph.named("urgent");
            for (int i = 0; i < 3; i++) {
                urgent.task("u" + i).priority(5).cpu(ctx -> order.add("u"));
            }
            GraphRun run = scheduler.submit(top);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            GraphRun u = scheduler.submit(urgent);
            urgentQueued.countDown();
            run.await(Duration.ofSeconds(20));
            u.await(Duration.ofSeconds(20));
        }
        assertThat(String.join("", order)).isEqualTo("uuunnnn");
    }

    /**
     * One worker runs a chain x -> y of normal tasks; x's body submits a run of urgent tasks. When
     * x ends, the worker picks its next task: the urgent ones go before y, its continuation.
     */
    @Test
    void urgentTasksSubmittedByABodyGoBeforeItsContinuation() throws Exception {
        ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
        try (Scheduler scheduler = Scheduler.builder().threads(1).build()) {
            TaskGraph urgent = TaskGraph.named("urgent");
            for (int i = 0; i < 3; i++) {
                urgent.task("u" + i).priority(5).cpu(ctx -> order.add("u"));
            }
            AtomicReference<GraphRun> u = new AtomicReference<>();
            TaskGraph chain = TaskGraph.named("chain");
            Task<Integer> x = chain.task("x").cpu(ctx -> {
                u.set(scheduler.submit(urgent));
                return 1;
            });
            chain.task("y").after(x).cpu(ctx -> order.add("y"));
            scheduler.submit(chain).await(Duration.ofSeconds(20));
            u.get().await(Duration.ofSeconds(20));
        }
        assertThat(String.join("", order)).isEqualTo("uuuy");
    }

    /**
     * An urgent task that failed is queued again by the timer for its retry, while one worker
     * goes through a long queue of normal tasks: once it is queued again, the worker must pick it
     * before the next normal task (one normal task may have been picked in the same instant).
     */
    @Test
    void anUrgentRetryQueuedByTheTimerGoesBeforeQueuedNormalTasks() throws Exception {
        List<Long> normalStarts = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Long> retryReady = new AtomicReference<>();
        AtomicReference<Long> retryStart = new AtomicReference<>();
        TaskListener listener = event -> {
            if (event.type() == EventType.TASK_RETRYING && "u".equals(event.taskName())) {
                retryReady.compareAndSet(null, event.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20));
            }
        };
        try (Scheduler scheduler =
                Scheduler.builder().threads(1).listener(listener).build()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch go = new CountDownLatch(1);
            TaskGraph blocker = TaskGraph.named("blocker");
            blocker.task("b").cpu(ctx -> {
                started.countDown();
                return go.await(10, TimeUnit.SECONDS);
            });
            GraphRun blocked = scheduler.submit(blocker);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            AtomicInteger attempts = new AtomicInteger();
            TaskGraph urgent = TaskGraph.named("urgent");
            urgent.task("u").priority(5).retries(1, Duration.ofMillis(20)).cpu(ctx -> {
                if (attempts.incrementAndGet() == 1) {
                    throw new IllegalStateException("first attempt fails");
                }
                retryStart.set(System.nanoTime());
                return 1;
            });
            GraphRun u = scheduler.submit(urgent);
            List<GraphRun> normal = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                TaskGraph g = TaskGraph.named("normal" + i);
                g.task("n").cpu(ctx -> {
                    normalStarts.add(System.nanoTime());
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
                    while (System.nanoTime() < end) {
                        Thread.onSpinWait();
                    }
                    return 1;
                });
                normal.add(scheduler.submit(g));
            }
            go.countDown();
            blocked.await(Duration.ofSeconds(20));
            u.await(Duration.ofSeconds(20));
            for (GraphRun r : normal) {
                r.await(Duration.ofSeconds(20));
            }
        }
        assertThat(retryStart.get()).isNotNull();
        Long ready = retryReady.get();
        assertThat(ready).as("the retry was announced").isNotNull();
        long queuedAt = ready + TimeUnit.MILLISECONDS.toNanos(2); // the timer's own delay
        assertThat(retryStart.get()).isGreaterThan(ready);
        long between;
        synchronized (normalStarts) {
            between = normalStarts.stream()
                    .filter(t -> t > queuedAt && t < retryStart.get())
                    .count();
        }
        assertThat(between)
                .as("normal tasks started after the urgent retry was queued again, of %d", normalStarts.size())
                .isLessThanOrEqualTo(1);
    }

    // ---------------------------------------------------------------- profiles (promise 3)

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    private static final long USER_CODE_NANOS = TimeUnit.MILLISECONDS.toNanos(60);

    /**
     * One worker runs a then b (b after a, a continuation); between them user code runs on that
     * worker for 60 ms. b's body is trivial: its recorded duration must not hold the user code.
     * The check: recorded duration of b minus what b's body took from the end of the user code
     * to its own end stays below half the user code's time.
     */
    private static void checkNotAbsorbed(String what, RunProfile profile, String task, long userCodeEnd, long bodyEnd) {
        TaskTiming t = profile.tasks().stream()
                .filter(x -> x.taskName().equals(task))
                .findFirst()
                .orElseThrow();
        long fromUserCode = bodyEnd - userCodeEnd;
        assertThat(userCodeEnd).as("%s: the user code ran", what).isPositive();
        assertThat(t.durationNanos() - fromUserCode)
                .as(
                        "%s: task %s recorded %d ns, of which %d ns after the user code ended",
                        what, task, t.durationNanos(), fromUserCode)
                .isLessThan(USER_CODE_NANOS / 2);
    }

    /** A {@link io.hts.engine.observe.TaskScope} is user code too; its close after a's body. */
    @Test
    void aTaskScopesCloseIsNotCountedInTheNextTask() throws Exception {
        AtomicReference<Long> userCodeEnd = new AtomicReference<>(0L);
        AtomicReference<Long> bodyEnd = new AtomicReference<>(0L);
        try (Scheduler scheduler = Scheduler.builder()
                .threads(1)
                .taskScope((run, graph, task) -> task.equals("a")
                        ? () -> {
                            spin(USER_CODE_NANOS);
                            userCodeEnd.set(System.nanoTime());
                        }
                        : io.hts.engine.observe.TaskScope.Scope.NONE)
                .build()) {
            TaskGraph g = TaskGraph.named("scope");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            g.task("b").after(a).cpu(ctx -> {
                bodyEnd.set(System.nanoTime());
                return 1;
            });
            GraphRun run = scheduler.execute(g);
            checkAgainstDependencies(run.profile());
            checkScopeCase(run.profile(), userCodeEnd.get(), bodyEnd.get());
        }
    }

    private static void checkScopeCase(RunProfile profile, long userCodeEnd, long bodyEnd) {
        // the scope of a closes within a's attempt (fine) or between a and b (must not be b's)
        TaskTiming a = profile.tasks().get(0);
        TaskTiming b = profile.tasks().get(1);
        assertThat(a.durationNanos() + b.durationNanos())
                .as("a %s + b %s", a, b)
                .isGreaterThanOrEqualTo(0);
        checkNotAbsorbed("a task scope's close", profile, "b", userCodeEnd, bodyEnd);
    }

    /** A retry's backoff function (Resilience4j IntervalFunction) is user code run between tasks. */
    @Test
    void aRetrysBackoffFunctionIsNotCountedInTheNextTask() throws Exception {
        AtomicReference<Long> userCodeEnd = new AtomicReference<>(0L);
        AtomicReference<Long> bodyEnd = new AtomicReference<>(0L);
        ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
        try (Scheduler scheduler = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("backoff");
            AtomicInteger attempts = new AtomicInteger();
            Task<Integer> first = g.task("first").cpu(ctx -> 1);
            g.task("a")
                    .after(first)
                    .retries(1, attempt -> {
                        spin(USER_CODE_NANOS);
                        userCodeEnd.compareAndSet(0L, System.nanoTime());
                        return 1L;
                    })
                    .cpu(ctx -> {
                        order.add("a");
                        if (attempts.incrementAndGet() == 1) {
                            throw new IllegalStateException("once");
                        }
                        return 1;
                    });
            g.task("s").after(first).cpu(ctx -> {
                order.add("s");
                bodyEnd.compareAndSet(0L, System.nanoTime());
                return 1;
            });
            GraphRun run = scheduler.execute(g);
            RunProfile p = run.profile();
            checkAgainstDependencies(p);
            if (String.join("", order).startsWith("as")) {
                checkNotAbsorbed("a retry's backoff function", p, "s", userCodeEnd.get(), bodyEnd.get());
            } else {
                assertThat(String.join("", order))
                        .as("a ran first on the one worker")
                        .startsWith("as");
            }
        }
    }

    /**
     * An exception whose {@code toString()} (and message) takes 60 ms: the engine turns a failure
     * into text for the profile, the event and the log; that is user code between two tasks on
     * the worker, and must not be counted in the next task the worker goes on with.
     */
    @Test
    void aSlowExceptionToStringIsNotCountedInTheNextTask() throws Exception {
        AtomicReference<Long> userCodeEnd = new AtomicReference<>(0L);
        AtomicReference<Long> bodyEnd = new AtomicReference<>(0L);
        try (Scheduler scheduler = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("slow-text");
            CountDownLatch bRan = new CountDownLatch(1);
            Task<Integer> first = g.task("first").cpu(ctx -> 1);
            g.task("fails").after(first).cpu(ctx -> {
                throw new SlowText(userCodeEnd);
            });
            g.task("next").after(first).cpu(ctx -> {
                bodyEnd.set(System.nanoTime());
                bRan.countDown();
                return 1;
            });
            GraphRun run = scheduler.submit(
                    g, io.hts.engine.run.RunOptions.failureMode(io.hts.engine.run.FailureMode.CONTINUE));
            try {
                run.await(Duration.ofSeconds(20));
            } catch (RuntimeException expected) {
                // failed
            }
            RunProfile p = run.profile();
            checkAgainstDependencies(p);
            TaskTiming fails = p.tasks().get(1);
            TaskTiming next = p.tasks().get(2);
            if (next.startNanos() >= fails.endNanos() && userCodeEnd.get() != 0 && bodyEnd.get() > userCodeEnd.get()) {
                checkNotAbsorbed("an exception's toString()", p, "next", userCodeEnd.get(), bodyEnd.get());
            }
        }
    }

    static final class SlowText extends RuntimeException {
        private final transient AtomicReference<Long> end;

        SlowText(AtomicReference<Long> end) {
            super("slow", null, false, false);
            this.end = end;
        }

        @Override
        public String getMessage() {
            spin(USER_CODE_NANOS / 4);
            end.set(System.nanoTime());
            return "slow";
        }

        @Override
        public String toString() {
            spin(USER_CODE_NANOS / 4);
            end.set(System.nanoTime());
            return "SlowText: slow";
        }
    }

    private static void checkAgainstDependencies(RunProfile p) {
        for (TaskTiming t : p.tasks()) {
            if (t.startNanos() < 0) {
                continue;
            }
            assertThat(t.startNanos())
                    .as("%s starts at or after its ready time", t)
                    .isGreaterThanOrEqualTo(t.readyNanos());
            for (String pred : p.topology().predecessorNames(t.index())) {
                TaskTiming d = p.tasks().stream()
                        .filter(x -> x.taskName().equals(pred))
                        .findFirst()
                        .orElseThrow();
                if (d.endNanos() >= 0) {
                    assertThat(t.startNanos()).as("%s after %s", t, d).isGreaterThanOrEqualTo(d.endNanos());
                }
            }
        }
    }

    /**
     * Snapshots of a run still going, taken while a task is in its second attempt: "its task
     * timings still say the task has not ended" ({@code endNanos} -1 for a running attempt), every
     * figure is sane, and the running task counts so far.
     */
    @Test
    void aSnapshotDuringASecondAttemptSaysTheTaskHasNotEnded() throws Exception {
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            CountDownLatch inSecond = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            AtomicInteger attempts = new AtomicInteger();
            TaskGraph g = TaskGraph.named("snap");
            Task<Integer> r = g.task("r").retries(1, Duration.ZERO).cpu(ctx -> {
                if (attempts.incrementAndGet() == 1) {
                    throw new IllegalStateException("first attempt fails");
                }
                inSecond.countDown();
                finish.await(10, TimeUnit.SECONDS);
                return 1;
            });
            g.task("after").after(r).cpu(ctx -> 1);
            GraphRun run = scheduler.submit(g);
            assertThat(inSecond.await(10, TimeUnit.SECONDS)).isTrue();
            spin(TimeUnit.MILLISECONDS.toNanos(5));
            RunProfile p = run.profile();
            TaskTiming t = p.tasks().get(0);
            TaskTiming after = p.tasks().get(1);
            finish.countDown();
            run.await(Duration.ofSeconds(20));
            org.assertj.core.api.SoftAssertions.assertSoftly(soft -> {
                soft.assertThat(p.totalWork())
                        .as("the running task counts so far")
                        .isPositive();
                soft.assertThat(t.state()).isEqualTo(TaskState.RUNNING);
                soft.assertThat(t.endNanos())
                        .as("a running attempt has not ended: %s", t)
                        .isEqualTo(-1);
                soft.assertThat(after.readyNanos())
                        .as("a successor of a task still running is not ready: %s", after)
                        .isZero();
            });
        }
    }

    /**
     * Snapshots taken again and again while many small tasks run on two workers: no negative or
     * impossible figure in any of them.
     */
    @Test
    void snapshotsOfARunInProgressAreSane() throws Exception {
        List<String> problems = new ArrayList<>();
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("busy");
            List<Task<Integer>> layer = new ArrayList<>();
            for (int l = 0; l < 20; l++) {
                List<Task<Integer>> next = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    var b = g.task("t" + l + "_" + i);
                    if (!layer.isEmpty()) {
                        b.after(layer.get(i), layer.get((i + 1) % layer.size()));
                    }
                    AtomicInteger att = new AtomicInteger();
                    b.retries(1, Duration.ZERO);
                    next.add(b.cpu(ctx -> {
                        spin(TimeUnit.MICROSECONDS.toNanos(200));
                        if ((ctx.taskName().hashCode() & 3) == 0 && att.incrementAndGet() == 1) {
                            throw new IllegalStateException("retry me");
                        }
                        return 1;
                    }));
                }
                layer = next;
            }
            for (int round = 0; round < 20 && problems.size() < 5; round++) {
                GraphRun run = scheduler.submit(g);
                while (!run.isDone() && problems.size() < 5) {
                    RunProfile p = run.profile();
                    check(p, problems);
                }
                run.await(Duration.ofSeconds(20));
            }
        }
        assertThat(problems).isEmpty();
    }

    private static void check(RunProfile p, List<String> problems) {
        if (p.makespan().isNegative()
                || p.totalWork().isNegative()
                || p.meanWait().isNegative()) {
            problems.add("negative summary: " + p.makespan() + " " + p.totalWork() + " " + p.meanWait());
        }
        var w = p.workerTime();
        if (w.work().isNegative()
                || w.schedulerDelay().isNegative()
                || w.shapeIdle().isNegative()) {
            problems.add("negative worker time: " + w);
        }
        p.workers().forEach(u -> {
            if (u.busyNanos() < 0 || u.idleNanos() < 0) {
                problems.add("negative worker usage " + u);
            }
        });
        if (p.criticalPath().length().compareTo(p.makespan()) > 0) {
            problems.add("critical path " + p.criticalPath().length() + " longer than makespan " + p.makespan());
        }
        for (TaskTiming t : p.tasks()) {
            if (t.state() == TaskState.RUNNING && t.endNanos() >= t.startNanos() && t.startNanos() >= 0) {
                problems.add("running task with an end: " + t);
            }
            if (t.startNanos() >= 0 && t.startNanos() < t.readyNanos()) {
                problems.add("start before ready: " + t);
            }
            if (t.endNanos() >= 0
                    && t.startNanos() >= 0
                    && t.endNanos() < t.startNanos()
                    && t.state().isTerminal()) {
                problems.add("final task ended before it started: " + t);
            }
        }
    }
}
