package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Releasable;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.support.FakeGpuBackend;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Results holding resources (device buffers) are released by the run after their last consumer. */
class ReleasableResultTests {

    /** A stand-in for a device buffer: counts its releases and whether a consumer read it after one. */
    static final class Resource implements Releasable {
        final AtomicInteger releases = new AtomicInteger();

        int read() {
            if (releases.get() > 0) {
                throw new IllegalStateException("read after release");
            }
            return 1;
        }

        @Override
        public void release() {
            releases.incrementAndGet();
        }
    }

    @Test
    void anIntermediateResultIsReleasedOnceAfterItsLastConsumerAndASinkResultIsLeftToTheCaller() {
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(new FakeGpuBackend(2))
                .build()) {
            TaskGraph g = TaskGraph.named("buffers");
            Task<Resource> produce = g.task("produce").gpu(ctx -> new Resource());
            Task<Integer> left =
                    g.task("left").after(produce).gpu(ctx -> ctx.input(produce).read());
            Task<Integer> right =
                    g.task("right").after(produce).cpu(ctx -> ctx.input(produce).read());
            Task<Resource> sink = g.task("sink").after(left, right).gpu(ctx -> new Resource());
            for (int run = 0; run < 20; run++) {
                GraphRun r = s.execute(g);
                assertThat(r.result(left) + r.result(right)).isEqualTo(2);
                assertThat(r.result(produce).releases).hasValue(1);
                assertThat(r.result(sink).releases).as("the caller's").hasValue(0);
            }
        }
    }

    @Test
    void aResultWhoseConsumerFailedIsReleasedWhenTheRunEnds() {
        try (Scheduler s =
                Scheduler.builder().threads(2).gpuBackend(new FakeGpuBackend(1)).build()) {
            TaskGraph g = TaskGraph.named("failing");
            Resource resource = new Resource();
            Task<Resource> produce = g.task("produce").gpu(ctx -> resource);
            g.task("consume").after(produce).gpu(ctx -> {
                throw new IllegalStateException("boom");
            });
            assertThatThrownBy(() -> s.execute(g)).isInstanceOf(GraphRunException.class);
            assertThat(resource.releases).hasValue(1);
        }
    }

    @Test
    void theResultOfATimedOutAttemptIsReleasedWhenItsBodyReturns() throws Exception {
        java.util.concurrent.CountDownLatch timedOut = new java.util.concurrent.CountDownLatch(1);
        Resource late = new Resource();
        try (Scheduler s =
                Scheduler.builder().threads(2).gpuBackend(new FakeGpuBackend(1)).build()) {
            TaskGraph g = TaskGraph.named("late");
            g.task("slow").timeout(java.time.Duration.ofMillis(50)).gpu(ctx -> {
                timedOut.await(10, java.util.concurrent.TimeUnit.SECONDS);
                return late;
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            timedOut.countDown();
            org.awaitility.Awaitility.await().until(() -> late.releases.get() == 1);
        }
    }

    @Test
    void graphsWithoutGpuBodiesLeaveResultsAlone() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("cpu-only");
            Task<Resource> produce = g.task("produce").cpu(ctx -> new Resource());
            g.task("consume").after(produce).cpu(ctx -> ctx.input(produce).read());
            assertThat(s.execute(g).result(produce).releases).hasValue(0);
        }
    }
}
