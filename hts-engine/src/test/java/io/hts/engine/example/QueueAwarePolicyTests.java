package io.hts.engine.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link QueueAwarePolicy}, the custom policy of docs/policies.md, places tasks as the page says. */
class QueueAwarePolicyTests {

    /** docs/policies.md's unit test of the policy: no scheduler, no GPU, one answer per status. */
    @Test
    void aBusyGpuSendsTheTaskToTheCpu() {
        TaskInfo task = new TaskInfo("score", "score", Set.of(Device.CPU, Device.GPU), 0, -1, -1);
        DeviceStatus cpu = new DeviceStatus(Device.CPU, DeviceHealth.UP, 8, 0, 2, 0, -1, "8 workers");
        DeviceStatus idleGpu = new DeviceStatus(Device.GPU, DeviceHealth.UP, 4, 0, 1, 5_000_000, 8L << 30, "cuda:0");
        DeviceStatus busyGpu = new DeviceStatus(Device.GPU, DeviceHealth.UP, 4, 3, 4, 40_000_000, 8L << 30, "cuda:0");
        SchedulingPolicy policy = new QueueAwarePolicy(512L << 20);

        assertThat(policy.selectDevice(task, SystemStatus.of(cpu, idleGpu))).isEqualTo(Device.GPU);
        assertThat(policy.selectDevice(task, SystemStatus.of(cpu, busyGpu))).isEqualTo(Device.CPU);
    }

    /**
     * With a stream free, a task with both bodies goes to the GPU; with both streams of the GPU
     * held, it goes to the CPU instead of queueing; a task with one body is never asked about.
     */
    @Test
    void itSendsTasksToTheGpuOnlyWhileAStreamIsFree() throws Exception {
        FakeGpuBackend gpu = new FakeGpuBackend(2);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new QueueAwarePolicy(0))
                .gpuBackend(gpu)
                .build()) {
            TaskGraph idle = TaskGraph.named("idle");
            Task<String> first = idle.task("first").bodies(ctx -> "cpu", ctx -> "gpu");
            assertThat(s.execute(idle).result(first)).isEqualTo("gpu");

            CountDownLatch holding = new CountDownLatch(2);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph busy = TaskGraph.named("busy");
            for (int i = 0; i < 2; i++) {
                busy.task("hold-" + i).gpu(ctx -> {
                    holding.countDown();
                    return release.await(10, TimeUnit.SECONDS);
                });
            }
            GraphRun held = s.submit(busy);
            try {
                assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
                TaskGraph meanwhile = TaskGraph.named("meanwhile");
                Task<String> second = meanwhile.task("second").bodies(ctx -> "cpu", ctx -> "gpu");
                assertThat(s.execute(meanwhile).result(second))
                        .as("both streams held")
                        .isEqualTo("cpu");
            } finally {
                release.countDown();
            }
            held.await();
            assertThat(s.policy().name()).isEqualTo("queue-aware");
        }
    }
}
