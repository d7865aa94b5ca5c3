package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.support.RecordingListener;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DiagnosisTests {

    @Test
    void diagnoseListsEveryWaitingTaskWithWhatItStillWaitsOn() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).resource("licence", 1).build()) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("stuck");
            Task<Object> hang = g.task("hang").resource("licence", 1).cpu(ctx -> {
                started.countDown();
                release.await(60, TimeUnit.SECONDS);
                return null;
            });
            Task<Object> other = g.task("needs-licence").resource("licence", 1).cpu(ctx -> null);
            Task<Object> fine = g.task("fine").cpu(ctx -> null);
            g.task("downstream").after(hang, fine).cpu(ctx -> null);
            GraphRun run = s.submit(g);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> run.state(fine) == TaskState.SUCCEEDED);
            Diagnosis d = run.diagnose();
            assertThat(d.counts())
                    .containsEntry(TaskState.RUNNING, 1)
                    .containsEntry(TaskState.SUCCEEDED, 1)
                    .containsEntry(TaskState.READY, 1)
                    .containsEntry(TaskState.CREATED, 1);
            assertThat(d.frontier())
                    .extracting(Diagnosis.Waiting::taskName)
                    .containsExactlyInAnyOrder("hang", "needs-licence");
            assertThat(d.waiting())
                    .filteredOn(w -> w.taskName().equals("downstream"))
                    .singleElement()
                    .satisfies(w -> {
                        assertThat(w.state()).isEqualTo(TaskState.CREATED);
                        assertThat(w.waitingOn()).containsExactly("hang (RUNNING)");
                        assertThat(w.reason()).contains("waits for 1 of 2 dependencies");
                    });
            assertThat(d.waiting())
                    .filteredOn(w -> w.taskName().equals("needs-licence"))
                    .singleElement()
                    .satisfies(w -> assertThat(w.reason()).contains("licence=1").contains("free: {licence=0}"));
            assertThat(d.toString())
                    .contains("run " + run.runId() + " of graph 'stuck' is RUNNING")
                    .contains("hang [RUNNING] running for")
                    .contains("downstream [CREATED]");
            assertThat(run.state(other)).isEqualTo(TaskState.READY);
            release.countDown();
            run.await();
        }
    }

    @Test
    void theWatchdogReportsARunThatMakesNoProgress() throws Exception {
        RecordingListener events = new RecordingListener();
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .stallTimeout(Duration.ofMillis(100))
                .listener(events)
                .build()) {
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("stall");
            g.task("forever").cpu(ctx -> release.await(60, TimeUnit.SECONDS));
            GraphRun run = s.submit(g);
            await().atMost(Duration.ofSeconds(10)).until(() -> events.count(EventType.RUN_STALLED) == 1);
            assertThat(events.events(e -> e.type() == EventType.RUN_STALLED))
                    .singleElement()
                    .satisfies(e -> {
                        assertThat(e.runId()).isEqualTo(run.runId());
                        assertThat(e.detail())
                                .contains("no task finished for")
                                .contains("1 task ready, running or retrying");
                    });
            release.countDown();
            run.await();
        }
    }

    @Test
    void resourceLimitsCapConcurrencyWithoutHoldingWorkers() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).resource("io", 1).build()) {
            java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger max = new java.util.concurrent.atomic.AtomicInteger();
            CountDownLatch firstIn = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch cpuRan = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("io");
            g.group(
                    "read",
                    6,
                    (i, t) -> t.resource("io", 1).cpu(ctx -> {
                        int now = inside.incrementAndGet();
                        max.accumulateAndGet(now, Math::max);
                        firstIn.countDown();
                        release.await(30, TimeUnit.SECONDS);
                        inside.decrementAndGet();
                        return i;
                    }));
            g.task("compute").cpu(ctx -> {
                cpuRan.countDown();
                return null;
            });
            GraphRun run = s.submit(g);
            assertThat(firstIn.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(cpuRan.await(10, TimeUnit.SECONDS))
                    .as("the second worker is free: waiting readers hold no thread")
                    .isTrue();
            assertThat(s.resources().waiting()).isEqualTo(5);
            release.countDown();
            run.await();
            assertThat(max.get()).isOne();
            assertThat(s.resources().available("io")).isOne();
        }
    }

    @Test
    void anUnknownResourceIsRejectedAtSubmitNamingTheTask() {
        try (Scheduler s = Scheduler.builder().threads(1).resource("io", 2).build()) {
            TaskGraph g = TaskGraph.named("res");
            g.task("upload").resource("network", 1).cpu(ctx -> null);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> s.submit(g))
                    .isInstanceOf(io.hts.engine.graph.GraphValidationException.class)
                    .hasMessageContaining("task 'upload'")
                    .hasMessageContaining("'network'")
                    .hasMessageContaining("[io]");
        }
    }
}
