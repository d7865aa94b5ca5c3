package io.hts.autoconfigure.support;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * An application of the starter with the graphs the dashboard's tests run: {@code gated} (a load,
 * four shards, a task that waits for the test's {@link Gate}, a merge: a run that stays in progress
 * until the test opens the gate or cancels it), {@code failing} (a task that throws, with a cause,
 * and its descendant cancelled) and {@code quick} (two tasks).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class DashboardApp {

    /** What {@code failing}'s task {@code boom} throws. */
    public static final String BOOM = "bad input in row 7";

    /** Holds the {@code gated} graph's {@code hold} task until a test opens it; a new one for each run. */
    public static final class Gate {

        private volatile CountDownLatch latch = new CountDownLatch(1);

        /** Lets every waiting {@code hold} go on, and the ones after until {@link #close()}. */
        public void open() {
            latch.countDown();
        }

        /** Makes the next {@code hold} wait again. */
        public void close() {
            latch = new CountDownLatch(1);
        }

        void pass() throws InterruptedException {
            // bounded, so that a test that forgets to open it fails instead of hanging
            if (!latch.await(Duration.ofMinutes(2).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the gate stayed closed for two minutes");
            }
        }
    }

    @Bean
    Gate gate() {
        return new Gate();
    }

    @Bean
    TaskGraph gated(Gate gate) {
        TaskGraph g = TaskGraph.named("gated");
        Task<Integer> load = g.task("load").cpu(ctx -> 8);
        TaskGroup<Integer> shards = g.group("shard", 4, (i, t) -> t.after(load).cpu(ctx -> ctx.input(load) * i));
        Task<Integer> hold = g.task("hold").after(shards).cpu(ctx -> {
            gate.pass();
            return ctx.inputs(shards).stream().mapToInt(Integer::intValue).sum();
        });
        g.task("merge").after(hold).cpu(ctx -> ctx.input(hold) + 1);
        return g;
    }

    @Bean
    TaskGraph failing() {
        TaskGraph g = TaskGraph.named("failing");
        Task<Integer> prepare = g.task("prepare").cpu(ctx -> 7);
        Task<Integer> boom = g.task("boom").after(prepare).cpu(ctx -> {
            throw new IllegalStateException(BOOM, new IOException("short read at row " + ctx.input(prepare)));
        });
        g.task("child").after(boom).cpu(ctx -> ctx.input(boom) + 1);
        return g;
    }

    @Bean
    TaskGraph quick() {
        TaskGraph g = TaskGraph.named("quick");
        Task<Integer> a = g.task("a").cpu(ctx -> 20);
        g.task("b").after(a).cpu(ctx -> ctx.input(a) + 1);
        return g;
    }
}
