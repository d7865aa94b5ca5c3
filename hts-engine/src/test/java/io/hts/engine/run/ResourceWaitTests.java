package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Tasks waiting for a resource hold no thread, and a cancelled one stops waiting at once: it never
 * receives a grant, keeps no run alive, and the resource goes to the next waiter.
 */
class ResourceWaitTests {

    @Test
    void aCancelledWaitingTaskLeavesTheLimiterAtOnceAndTheResourceGoesToTheNextWaiter() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).resource("licence", 1).build()) {
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("licensed");
            g.task("holder").resource("licence", 1).cpu(ctx -> {
                holding.countDown();
                return release.await(10, TimeUnit.SECONDS);
            });
            Task<Boolean> waiter = g.task("waiter").resource("licence", 1).cpu(ctx -> true);
            Task<Boolean> next = g.task("next").resource("licence", 1).cpu(ctx -> true);
            GraphRun run = s.submit(g);
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> s.resources().waiting() == 2);
            assertThat(run.cancel(waiter)).isTrue();
            assertThat(run.state(waiter)).isEqualTo(TaskState.CANCELLED);
            assertThat(s.resources().waiting())
                    .as("the cancelled task left the limiter's queue")
                    .isOne();
            release.countDown();
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
            assertThat(run.state(next)).isEqualTo(TaskState.SUCCEEDED);
            assertThat(s.resources().available("licence")).isOne();
        }
    }

    @Test
    void cancellingARunWithManyWaitingTasksEndsItAtOnceAndLeavesNoWaiterBehind() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).resource("io", 1).build()) {
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("io");
            g.task("holder").resource("io", 1).cpu(ctx -> {
                holding.countDown();
                return release.await(10, TimeUnit.SECONDS);
            });
            // The readers become ready only once the holder holds the permit, so none of them can
            // take it first and finish: all 500 must queue behind the holder.
            Task<Boolean> opened = g.task("opened").cpu(ctx -> holding.await(10, TimeUnit.SECONDS));
            TaskGroup<Integer> readers = g.group(
                    "read", 500, (i, t) -> t.after(opened).resource("io", 1).cpu(ctx -> i));
            GraphRun run = s.submit(g);
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> s.resources().waiting() == readers.size());
            assertThat(run.cancel()).isTrue();
            assertThat(s.resources().waiting())
                    .as("no waiter of the cancelled run is left")
                    .isZero();
            release.countDown();
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
            assertThat(run.state(opened)).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.states())
                    .as("the readers, and the holder whose wait the cancel interrupted")
                    .allSatisfy((name, state) -> {
                        if (!name.equals("opened")) {
                            assertThat(state).as(name).isEqualTo(TaskState.CANCELLED);
                        }
                    });
            assertThat(s.resources().available("io"))
                    .as("the holder gave its permit back")
                    .isOne();
        }
    }
}
