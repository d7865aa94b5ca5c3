package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventType;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TimeoutRaceBreakTests {

    @Test
    void bodiesEndingRightAtTheirTimeLimitEndEachTaskExactlyOnce() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Map<String, AtomicInteger> ends = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .listener(e -> {
                        if (e.type() == EventType.TASK_SUCCEEDED
                                || e.type() == EventType.TASK_FAILED
                                || e.type() == EventType.TASK_CANCELLED) {
                            ends.computeIfAbsent(e.runId() + "/" + e.taskName(), k -> new AtomicInteger())
                                    .incrementAndGet();
                        }
                    })
                    .build();
            try {
                for (int k = 0; k < 300; k++) {
                    TaskGraph g = TaskGraph.named("edge-" + k);
                    long spin = 1_500_000 + (k % 10) * 100_000;
                    Task<Integer> t = g.task("t")
                            .timeout(Duration.ofMillis(2))
                            .retries(1, Duration.ZERO)
                            .cpu(ctx -> {
                                long until = System.nanoTime() + spin;
                                while (System.nanoTime() < until) {
                                    Thread.onSpinWait();
                                }
                                return 1;
                            });
                    Task<Integer> c = g.task("c").after(t).cpu(ctx -> ctx.input(t) + 1);
                    GraphRun run = s.submit(g);
                    Checks.awaitEnd(run, Duration.ofSeconds(5));
                    Checks.assertConsistent(run);
                    if (run.state(t) == TaskState.SUCCEEDED) {
                        assertThat(run.result(c)).isEqualTo(2);
                    }
                }
                // late ends, if any, would show within this window: none may come
                await().during(Duration.ofMillis(100))
                        .atMost(Duration.ofSeconds(2))
                        .until(() -> ends.values().stream().allMatch(v -> v.get() <= 1));
                ends.forEach((k, v) -> {
                    if (v.get() != 1) {
                        problems.add(k + " ended " + v.get() + " times");
                    }
                });
                assertThat(problems).isEmpty();
                assertThat(ends).hasSize(600);
            } finally {
                s.shutdownNow();
                s.awaitTermination(Duration.ofSeconds(3));
            }
        });
    }
}
