package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Issue 15 item 10: idle worker time split between what the scheduler caused and what the graph's shape caused. */
class WorkerTimeTests {

    private static WorkerTime sweep(int workers, long makespan, long[]... tasks) {
        long[] ready = new long[tasks.length];
        long[] start = new long[tasks.length];
        long[] end = new long[tasks.length];
        for (int k = 0; k < tasks.length; k++) {
            ready[k] = tasks[k][0];
            start[k] = tasks[k][1];
            end[k] = tasks[k][2];
        }
        return WorkerTime.sweep(workers, makespan, ready, start, end, tasks.length);
    }

    @Test
    void aReadyTaskWaitingWhileAWorkerIdlesIsTheSchedulersAndIdlenessWithNothingReadyIsTheShapes() {
        // two workers, 100 ns: B runs 0-100; A is ready at 0 but starts at 10 (10 ns the scheduler's),
        // runs to 50, and then one worker has nothing to do for 50 ns (the shape's)
        WorkerTime w = sweep(2, 100, new long[] {0, 10, 50}, new long[] {0, 0, 100});
        assertThat(w.capacity()).isEqualTo(Duration.ofNanos(200));
        assertThat(w.work()).isEqualTo(Duration.ofNanos(140));
        assertThat(w.schedulerDelay()).isEqualTo(Duration.ofNanos(10));
        assertThat(w.shapeIdle()).isEqualTo(Duration.ofNanos(50));
        assertThat(w.schedulerShare()).isEqualTo(0.05);
        assertThat(w.shapeShare()).isEqualTo(0.25);
    }

    @Test
    void waitsBeyondTheIdleWorkersCountOnlyAsManyAsThereAreIdleWorkers() {
        // one worker, three tasks ready at 0, run back to back: no worker is ever idle while they wait
        WorkerTime w = sweep(1, 30, new long[] {0, 0, 10}, new long[] {0, 10, 20}, new long[] {0, 20, 30});
        assertThat(w.schedulerDelay()).isZero();
        assertThat(w.shapeIdle()).isZero();
        // a chain on two workers: each hand-off of 2 ns is the scheduler's, the second worker idles (shape)
        WorkerTime chain = sweep(2, 24, new long[] {0, 2, 12}, new long[] {12, 14, 24});
        assertThat(chain.schedulerDelay()).isEqualTo(Duration.ofNanos(4));
        assertThat(chain.work()).isEqualTo(Duration.ofNanos(20));
        assertThat(chain.shapeIdle()).isEqualTo(Duration.ofNanos(48 - 20 - 4));
    }

    @Test
    void aRealRunAccountsForEveryWorkerNanosecondOnce() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("mixed");
            var root = g.task("root").cpu(ctx -> 1);
            for (int i = 0; i < 50; i++) {
                g.task("leaf" + i).after(root).cpu(ctx -> ctx.input(root) + 1);
            }
            WorkerTime w = s.execute(g).profile().workerTime();
            assertThat(w.work().plus(w.schedulerDelay()).plus(w.shapeIdle())).isEqualTo(w.capacity());
            assertThat(w.work()).isPositive();
        }
    }
}
