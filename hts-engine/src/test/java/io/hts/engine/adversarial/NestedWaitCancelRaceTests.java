package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A cancel that lands while a body enters or leaves {@code ctx.execute}'s wait (its worker moves
 * the body between the task it runs and the tasks it suspended) still reaches it: a body that
 * waits for a nested run whose task blocks until interrupted, or that blocks until interrupted
 * once its nested run is over, always ends, and so does its run. The cancel is aimed at the move
 * (the body raises a flag just before it, the canceller waits for the flag, then a random number
 * of spins), many times.
 */
class NestedWaitCancelRaceTests {

    private static final int TRIALS = 6_000;
    private static final Duration BOUND = Duration.ofSeconds(20);

    private static Scheduler scheduler;

    @BeforeAll
    static void start() {
        scheduler =
                Scheduler.builder().threads(2).threadNamePrefix("nested-race-").build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        scheduler.shutdownNow();
        scheduler.awaitTermination(Duration.ofSeconds(5));
    }

    /** Blocks until the thread is interrupted (the only way out). */
    private static int blockUntilInterrupted() throws InterruptedException {
        new CountDownLatch(1).await();
        throw new AssertionError("unreachable");
    }

    @Test
    void aCancelAsTheBodyEntersItsNestedWaitReachesTheNestedRun() throws Exception {
        raceCancels(moment -> {
            TaskGraph inner = TaskGraph.named("inner");
            inner.task("blocks").cpu(ctx -> blockUntilInterrupted());
            TaskGraph outer = TaskGraph.named("outer-enter");
            Task<Integer> body = outer.task("waits").cpu(ctx -> {
                moment.set(true);
                ctx.execute(inner);
                return 1;
            });
            return new Trial(outer, body);
        });
    }

    @Test
    void aCancelAsTheBodyLeavesItsNestedWaitInterruptsTheBody() throws Exception {
        raceCancels(moment -> {
            TaskGraph inner = TaskGraph.named("inner");
            inner.task("quick").cpu(ctx -> {
                moment.set(true);
                return 1;
            });
            TaskGraph outer = TaskGraph.named("outer-exit");
            Task<Integer> body = outer.task("waits").cpu(ctx -> {
                ctx.execute(inner);
                return blockUntilInterrupted();
            });
            return new Trial(outer, body);
        });
    }

    private record Trial(TaskGraph graph, Task<Integer> body) {}

    private static void raceCancels(Function<AtomicBoolean, Trial> trials) throws Exception {
        SplittableRandom random = new SplittableRandom(42);
        List<String> stuck = new ArrayList<>();
        for (int i = 0; i < TRIALS && stuck.size() < 3; i++) {
            AtomicBoolean moment = new AtomicBoolean();
            Trial trial = trials.apply(moment);
            GraphRun run = scheduler.submit(trial.graph());
            while (!moment.get() && !run.isDone()) {
                Thread.onSpinWait();
            }
            for (int s = random.nextInt(400); s > 0; s--) {
                Thread.onSpinWait();
            }
            assertThat(run.cancel())
                    .as("trial %d: the run was still running", i)
                    .isTrue();
            try {
                run.await(BOUND);
            } catch (GraphRunException expected) {
                // cancelled: the status is checked below
            } catch (TimeoutException ex) {
                stuck.add("trial " + i + ": " + run.diagnose());
                run.cancel(trial.body()); // a second chance, so that the next trials have workers
                continue;
            }
            assertThat(run.status()).as("trial %d", i).isEqualTo(RunStatus.CANCELLED);
        }
        assertThat(stuck).as("runs a cancel never reached").isEmpty();
    }
}
