package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A worker counts a run's finished tasks in a local batch; the batch must reach the run before
 * the worker runs anything of another run, user code included: else code of run B that waits
 * for run A (without helping) waits for a count held by its own thread. Here the one worker ends
 * A's last task, then seeds B's roots (a graph of many roots is seeded on a worker); a listener of
 * B's first TASK_READY waits for A's future. A must be done by then.
 */
class CountingAcrossRunsTests {

    @Test
    void aRunsLastCountReachesItBeforeTheWorkerSeedsAnotherRunsRoots() throws Exception {
        AtomicReference<GraphRun> first = new AtomicReference<>();
        AtomicReference<String> seen = new AtomicReference<>();
        AtomicBoolean asked = new AtomicBoolean();
        TaskListener waitsForA = new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {
                if (event.type() == EventType.TASK_READY
                        && event.graphName().equals("b")
                        && asked.compareAndSet(false, true)) {
                    try {
                        first.get().future().get(5, TimeUnit.SECONDS); // blocks, does not help
                        seen.set("a done");
                    } catch (Exception ex) {
                        seen.set("a not done: " + ex);
                    }
                }
            }

            @Override
            public boolean wantsRoutineEvents() {
                return true;
            }
        };
        try (Scheduler scheduler =
                Scheduler.builder().threads(1).listener(waitsForA).build()) {
            CountDownLatch bSubmitted = new CountDownLatch(1);
            TaskGraph a = TaskGraph.named("a");
            a.task("last").cpu(ctx -> bSubmitted.await(10, TimeUnit.SECONDS));
            first.set(scheduler.submit(a));
            TaskGraph b = TaskGraph.named("b");
            for (int i = 0; i < 100; i++) { // more than 64 roots: seeded on the worker
                b.task("r" + i).cpu(ctx -> 1);
            }
            GraphRun second = scheduler.submit(b);
            bSubmitted.countDown();
            second.await(Duration.ofSeconds(30));
            first.get().await(Duration.ofSeconds(30));
        }
        assertThat(seen.get()).isEqualTo("a done");
    }
}
