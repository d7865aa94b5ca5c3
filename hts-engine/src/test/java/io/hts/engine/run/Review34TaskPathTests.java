package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.support.FakeGpuBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Review of issue 34's micro-changes to the per-task path (a task's CPU body read from the plan; a
 * null result not stored): null results read every way, on the CPU, on a (fake) GPU, and across
 * retries. All held.
 */
class Review34TaskPathTests {

    private static final Duration LONG = Duration.ofSeconds(20);

    @Test
    void nullResultsReadEveryWay() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("nulls");
        Task<String> a = g.task("a").cpu(ctx -> {
            gate.await(10, TimeUnit.SECONDS);
            return null;
        });
        TaskGroup<String> group = g.group("g", 40, (i, t) -> t.after(a).cpu(ctx -> i % 2 == 0 ? null : "v" + i));
        Task<List<String>> reader = g.task("reader").after(a, group).cpu(ctx -> {
            List<String> out = new ArrayList<>();
            out.add(ctx.input(a));
            out.addAll(ctx.inputs(group));
            return out;
        });
        Task<String> retried = g.task("retried")
                .retries(2, Duration.ofMillis(1))
                .cpu(ctx -> {
                    if (ctx.attempt() < 3) {
                        throw new IllegalStateException("attempt " + ctx.attempt());
                    }
                    return null;
                });
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            for (int round = 0; round < 50; round++) {
                GraphRun run = s.submit(g);
                CompletableFuture<String> before = run.whenDone(a);
                gate.countDown();
                run.await(LONG);
                assertThat(before.get()).isNull();
                assertThat(run.whenDone(a).get()).isNull();
                assertThat(run.result(a)).isNull();
                assertThat(run.result(retried)).isNull();
                List<String> expected = new ArrayList<>();
                expected.add(null);
                for (int i = 0; i < 40; i++) {
                    expected.add(i % 2 == 0 ? null : "v" + i);
                }
                assertThat(run.result(reader)).isEqualTo(expected);
                assertThat(run.results(group)).isEqualTo(expected.subList(1, 41));
                assertThat(run.whenDone(group).get()).isEqualTo(expected.subList(1, 41));
            }
        }
    }

    /** The same graph on two schedulers (two plans, each with its own bodies' array), and GPU bodies that return null. */
    @Test
    void nullResultsOnTwoSchedulersAndOnAGpu() throws Exception {
        TaskGraph g = TaskGraph.named("gpu-nulls");
        Task<int[]> first = g.task("first").gpu(ctx -> null);
        Task<Integer> second = g.task("second").after(first).gpu(ctx -> ctx.input(first) == null ? 7 : -1);
        Task<Integer> both =
                g.task("both").after(second).bodies(ctx -> ctx.input(second) + 1, ctx -> ctx.input(second) + 1);
        Task<String> last = g.task("last").after(both).cpu(ctx -> null);
        FakeGpuBackend gpu = new FakeGpuBackend(2);
        try (Scheduler s1 = Scheduler.builder().threads(2).gpuBackend(gpu).build();
                Scheduler s2 = Scheduler.builder()
                        .threads(1)
                        .gpuBackend(new FakeGpuBackend(1))
                        .build()) {
            for (Scheduler s : Arrays.asList(s1, s2, s1)) {
                GraphRun run = s.submit(g).await(LONG);
                assertThat(run.result(first)).isNull();
                assertThat(run.result(second)).isEqualTo(7);
                assertThat(run.result(both)).isEqualTo(8);
                assertThat(run.result(last)).isNull();
            }
        }
    }
}
