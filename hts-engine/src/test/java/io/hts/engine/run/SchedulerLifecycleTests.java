package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.support.Blocking;
import io.hts.engine.support.FakeGpuBackend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SchedulerLifecycleTests {

    private static boolean hasThreadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith(prefix) && t.isAlive());
    }

    @Test
    void shutdownLetsRunningRunsFinishRejectsNewOnesAndEndsEveryThread() throws Exception {
        Scheduler s =
                Scheduler.builder().threads(2).threadNamePrefix("lifecycle-a-").build();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("draining");
        Task<String> t = g.task("t").cpu(ctx -> {
            started.countDown();
            release.await(30, TimeUnit.SECONDS);
            return "finished";
        });
        GraphRun run = s.submit(g);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        s.shutdown();
        assertThat(s.isShutdown()).isTrue();
        TaskGraph late = TaskGraph.named("late");
        late.task("x").cpu(ctx -> 1);
        assertThatThrownBy(() -> s.submit(late))
                .isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("graph 'late'");
        assertThat(s.awaitTermination(Duration.ofMillis(50))).isFalse();
        release.countDown();
        assertThat(s.awaitTermination(Duration.ofSeconds(30))).isTrue();
        assertThat(run.result(t)).isEqualTo("finished");
        assertThat(s.isTerminated()).isTrue();
        assertThat(hasThreadsNamed("lifecycle-a-")).as("no thread left behind").isFalse();
    }

    @Test
    void shutdownNowCancelsRunningRunsAndRecordsTheirStates() throws Exception {
        Scheduler s =
                Scheduler.builder().threads(2).threadNamePrefix("lifecycle-b-").build();
        CountDownLatch started = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("cancelled-by-shutdown");
        Task<Object> sleeper = g.task("sleeper").cpu(ctx -> {
            started.countDown();
            Blocking.untilInterrupted(Duration.ofSeconds(60));
            return null;
        });
        Task<Object> next = g.task("next").after(sleeper).cpu(ctx -> null);
        GraphRun run = s.submit(g);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        List<GraphRun> cancelled = s.shutdownNow();
        assertThat(cancelled).containsExactly(run);
        assertThat(s.awaitTermination(Duration.ofSeconds(30))).isTrue();
        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(run.states())
                .containsEntry("sleeper", io.hts.engine.graph.TaskState.CANCELLED)
                .containsEntry("next", io.hts.engine.graph.TaskState.CANCELLED);
        assertThat(run.state(next).isTerminal()).isTrue();
        assertThat(hasThreadsNamed("lifecycle-b-")).isFalse();
    }

    @Test
    void closeWithoutRunsEndsPromptly() {
        Scheduler s =
                Scheduler.builder().threads(3).threadNamePrefix("lifecycle-c-").build();
        s.close();
        assertThat(s.isTerminated()).isTrue();
        assertThat(hasThreadsNamed("lifecycle-c-")).isFalse();
    }

    @Test
    void registeredGraphsAndStatusAreVisible() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("known");
            g.task("t").cpu(ctx -> 1);
            s.register(g);
            assertThat(s.registeredGraphs()).containsOnlyKeys("known");
            assertThat(s.systemStatus().devices()).singleElement().satisfies(d -> {
                assertThat(d.capacity()).isEqualTo(2);
                assertThat(d.usable()).isTrue();
            });
            assertThat(s.parallelism()).isEqualTo(2);
            assertThat(s.toString()).contains("2 CPU workers");
        }
    }

    /**
     * A shutdown whose last run ends on a device backend's own thread (its completion callback)
     * does not make the backend close itself from that thread: a backend that waits for its
     * threads on close (as the fake one does, up to 10 s) is closed at once from another thread.
     */
    @Test
    void aShutdownWhoseLastTaskEndsOnTheDeviceClosesTheDeviceFromAnotherThread() throws Exception {
        FakeGpuBackend gpu = new FakeGpuBackend(1);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Scheduler s = Scheduler.builder()
                .threads(2)
                .gpuBackend(gpu)
                .threadNamePrefix("lifecycle-")
                .build();
        TaskGraph g = TaskGraph.named("last-on-gpu");
        Task<Integer> last = g.task("last").gpu(ctx -> {
            running.countDown();
            return release.await(10, TimeUnit.SECONDS) ? 1 : 0;
        });
        GraphRun run = s.submit(g);
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        s.shutdown();
        release.countDown();
        assertThat(run.await(Duration.ofSeconds(10)).result(last)).isEqualTo(1);
        assertThat(s.awaitTermination(Duration.ofSeconds(5)))
                .as("terminated without waiting out the backend")
                .isTrue();
        assertThat(gpu.isClosed()).isTrue();
        assertThat(gpu.closedOn()).isEqualTo("lifecycle-close-devices");
    }
}
