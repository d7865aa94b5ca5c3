package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The callbacks a scheduler runs on a caller's thread (listeners of the events {@code submit}
 * publishes, {@code whenDone} stages a {@code cancel} completes) against that caller's interrupt
 * flag: a flag the callback sets is its own and is cleared when it returns; an interrupt another
 * thread sends to the caller meanwhile is the caller's and is kept, whatever the callback does
 * with it.
 */
class CallerInterruptTests {

    private static final Duration MAX = Duration.ofSeconds(20);

    /** Runs {@code action} on a fresh thread named {@code caller} and returns what it returned. */
    private static <T> T onCaller(java.util.concurrent.Callable<T> action) throws Exception {
        CompletableFuture<T> out = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        out.complete(action.call());
                    } catch (Throwable ex) {
                        out.completeExceptionally(ex);
                    }
                },
                "caller");
        t.setDaemon(true);
        t.start();
        try {
            return out.get(MAX.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException ex) {
            throw ex.getCause() instanceof Exception e ? e : new RuntimeException(ex.getCause());
        }
    }

    /** A started thread that interrupts {@code caller} once {@code inside} is counted down. */
    private static Thread interruptOnceInside(CountDownLatch inside, AtomicReference<Thread> caller) {
        Thread interrupter = new Thread(
                () -> {
                    try {
                        inside.await();
                        caller.get().interrupt();
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                },
                "interrupter");
        interrupter.setDaemon(true);
        interrupter.start();
        return interrupter;
    }

    private static Scheduler withListener(Consumer<TaskEvent> listener) {
        return Scheduler.builder().threads(2).listener(listener::accept).build();
    }

    private static TaskGraph oneTask(String name) {
        TaskGraph g = TaskGraph.named(name);
        g.task("t").cpu(ctx -> 7);
        return g;
    }

    @RepeatedTest(3)
    void aListenerInterruptingItselfOnTheSubmittingCallerLeavesTheCallerUninterrupted() throws Exception {
        for (EventType type : Set.of(EventType.RUN_SUBMITTED, EventType.TASK_READY)) {
            try (Scheduler s = withListener(e -> {
                if (e.type() == type && Thread.currentThread().getName().equals("caller")) {
                    Thread.currentThread().interrupt();
                }
            })) {
                String outcome = onCaller(() -> {
                    for (int i = 0; i < 200; i++) {
                        GraphRun run = s.submit(oneTask("g" + i));
                        if (Thread.currentThread().isInterrupted()) {
                            return type + ": flag set after submit " + i;
                        }
                        try {
                            run.await(MAX);
                        } catch (InterruptedException ex) {
                            return type + ": await interrupted at run " + i;
                        }
                    }
                    return "never";
                });
                assertThat(outcome).isEqualTo("never");
            }
        }
    }

    /**
     * The caller is interrupted by another thread while a listener runs on it; the listener
     * parks through it (ignores it), swallows it (catches the InterruptedException and does not
     * restore it), or first interrupts itself: whichever, the caller's interrupt survives the
     * submit, and the run still ends.
     */
    @ParameterizedTest(name = "a listener that {0}")
    @ValueSource(strings = {"parks", "swallows", "self-interrupts-first", "restores"})
    void anInterruptSentToTheCallerWhileAListenerRunsOnItIsKept(String listenerKind) throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        AtomicReference<Thread> caller = new AtomicReference<>();
        try (Scheduler s = withListener(e -> {
            if (e.type() != EventType.RUN_SUBMITTED || Thread.currentThread() != caller.get()) {
                return;
            }
            if (listenerKind.equals("self-interrupts-first")) {
                Thread.currentThread().interrupt();
                Thread.interrupted(); // and clears it: its own business
            }
            inside.countDown();
            switch (listenerKind) {
                case "parks", "self-interrupts-first" -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        LockSupport.park(this);
                    }
                }
                case "swallows" -> {
                    try {
                        new CountDownLatch(1).await();
                    } catch (InterruptedException ex) {
                        // swallowed: the flag is now clear
                    }
                }
                default -> {
                    try {
                        new CountDownLatch(1).await();
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        })) {
            Thread interrupter = interruptOnceInside(inside, caller);
            Object[] outcome = onCaller(() -> {
                caller.set(Thread.currentThread());
                TaskGraph g = TaskGraph.named("g");
                Task<Integer> t = g.task("t").cpu(ctx -> 7);
                GraphRun run = s.submit(g);
                boolean kept = Thread.interrupted();
                return new Object[] {kept, run.await(MAX).result(t)};
            });
            interrupter.join(MAX.toMillis());
            assertThat(outcome[0])
                    .as("the caller's interrupt survived a listener that %s", listenerKind)
                    .isEqualTo(true);
            assertThat(outcome[1]).isEqualTo(7);
        }
    }

    /** A listener on a caller's thread submits a nested run; the nested run's listener interrupts
     *  itself (its own flag), and then the caller is interrupted by another thread while the outer
     *  listener still runs: the one survives, the other not. */
    @Test
    void nestedCallbacksOnACallerKeepOnlyTheOutsideInterrupt() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        AtomicReference<Thread> caller = new AtomicReference<>();
        AtomicReference<Scheduler> self = new AtomicReference<>();
        try (Scheduler s = withListener(e -> {
            if (Thread.currentThread() != caller.get() || e.type() != EventType.RUN_SUBMITTED) {
                return;
            }
            if (e.graphName().equals("inner")) {
                Thread.currentThread().interrupt();
                return;
            }
            GraphRun nested = self.get().submit(oneTask("inner"));
            boolean innerLeftFlag = Thread.currentThread().isInterrupted();
            nested.await();
            inside.countDown();
            while (!Thread.currentThread().isInterrupted()) {
                LockSupport.park(this);
            }
            if (innerLeftFlag) {
                throw new AssertionError("the nested listener's own interrupt was left on the outer listener");
            }
        })) {
            self.set(s);
            Thread interrupter = interruptOnceInside(inside, caller);
            boolean kept = onCaller(() -> {
                caller.set(Thread.currentThread());
                GraphRun run = s.submit(oneTask("outer"));
                boolean flag = Thread.interrupted();
                run.await(MAX);
                return flag;
            });
            interrupter.join(MAX.toMillis());
            assertThat(kept)
                    .as("the outside interrupt survived the nested callbacks")
                    .isTrue();
            assertThat(s.listenerFailures()).as("no listener assertion failed").isZero();
        }
    }

    /** {@code cancel()} from a caller completes the run's whenDone stages on the caller's thread. */
    @RepeatedTest(3)
    void aWhenDoneStageInterruptingItselfOnACancellingCallerLeavesTheCallerUninterrupted() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            String outcome = onCaller(() -> {
                for (int i = 0; i < 100; i++) {
                    CountDownLatch started = new CountDownLatch(1);
                    TaskGraph g = TaskGraph.named("c" + i);
                    Task<Integer> t = g.task("t").cpu(ctx -> {
                        started.countDown();
                        long until = System.nanoTime() + MAX.toNanos();
                        while (!ctx.isCancelled() && System.nanoTime() < until) {
                            LockSupport.parkNanos(100_000);
                        }
                        return 1;
                    });
                    GraphRun run = s.submit(g);
                    run.whenDone(t)
                            .whenComplete((r, ex) -> Thread.currentThread().interrupt());
                    run.future().whenComplete((r, ex) -> Thread.currentThread().interrupt());
                    started.await();
                    run.cancel();
                    if (Thread.currentThread().isInterrupted()) {
                        return "flag set after cancel " + i;
                    }
                    try {
                        run.await(MAX);
                        return "run " + i + " not cancelled";
                    } catch (GraphRunException ex) {
                        // cancelled, as asked
                    } catch (InterruptedException ex) {
                        return "await interrupted at run " + i;
                    }
                }
                return "never";
            });
            assertThat(outcome).isEqualTo("never");
        }
    }

    /** The caller's own interrupt, set before it submits, is still set after: not a callback's to clear. */
    @Test
    void aCallersOwnInterruptSetBeforeSubmitIsKeptThroughClearingListeners() throws Exception {
        try (Scheduler s = withListener(e -> Thread.interrupted())) {
            boolean kept = onCaller(() -> {
                Thread.currentThread().interrupt();
                GraphRun run = s.submit(oneTask("g"));
                boolean flag = Thread.interrupted();
                run.await(MAX);
                return flag;
            });
            assertThat(kept).isTrue();
        }
    }
}
