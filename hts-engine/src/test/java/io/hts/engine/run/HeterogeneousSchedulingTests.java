package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.DeviceDecision;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.policy.PolicyType;
import io.hts.engine.policy.RoundRobinPolicy;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.ShortestJobFirstPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;
import io.hts.engine.support.Blocking;
import io.hts.engine.support.FakeGpuBackend;
import io.hts.engine.support.RecordingListener;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Policies choosing between the CPU and a test-only stand-in for the GPU backend. */
class HeterogeneousSchedulingTests {

    private static TaskGraph squares(int n, TaskGroup<Integer>[] out) {
        TaskGraph g = TaskGraph.named("squares");
        out[0] = g.group("sq", n, (i, t) -> t.bodies(ctx -> i * i, ctx -> i * i));
        return g;
    }

    @SuppressWarnings("unchecked")
    private static TaskGroup<Integer>[] holder() {
        return new TaskGroup[1];
    }

    @ParameterizedTest
    @EnumSource(
            value = PolicyType.class,
            names = {"GPU_FIRST", "CPU_FIRST"})
    void gpuFirstRunsEveryDualTaskOnTheGpuAndCpuFirstOnTheCpuWithTheSameResults(PolicyType type) {
        SchedulingPolicy policy = type.create();
        FakeGpuBackend gpu = new FakeGpuBackend(2);
        try (Scheduler s =
                Scheduler.builder().threads(2).policy(policy).gpuBackend(gpu).build()) {
            TaskGroup<Integer>[] sq = holder();
            TaskGraph g = squares(20, sq);
            GraphRun run = s.execute(g);
            assertThat(run.results(sq[0]))
                    .containsExactly(
                            0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225, 256, 289, 324, 361);
            long onGpu = run.profile().tasks().stream()
                    .filter(t -> t.device() == Device.GPU)
                    .count();
            assertThat(onGpu).as(policy.name()).isEqualTo(policy instanceof GpuFirstPolicy ? 20 : 0);
            assertThat(gpu.ran()).hasSize(policy instanceof GpuFirstPolicy ? 20 : 0);
        }
        assertThat(gpu.isClosed()).as("the scheduler closes its backend").isTrue();
    }

    @Test
    void roundRobinSpreadsTasksOverBothDevices() {
        FakeGpuBackend gpu = new FakeGpuBackend(2);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new RoundRobinPolicy())
                .gpuBackend(gpu)
                .build()) {
            TaskGroup<Integer>[] sq = holder();
            GraphRun run = s.execute(squares(40, sq));
            long onGpu = run.profile().tasks().stream()
                    .filter(t -> t.device() == Device.GPU)
                    .count();
            assertThat(onGpu).isEqualTo(20);
        }
    }

    @Test
    void eachPlacementIsAnEventCarryingThePolicysInputsAndChoice() {
        RecordingListener events = new RecordingListener();
        FakeGpuBackend gpu = new FakeGpuBackend(1);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .listener(events)
                .build()) {
            TaskGraph g = TaskGraph.named("placed");
            g.task("gemm")
                    .cost(Device.CPU, Duration.ofMillis(80))
                    .cost(Device.GPU, Duration.ofMillis(2))
                    .bodies(ctx -> 1, ctx -> 1);
            g.task("cpu-only").cpu(ctx -> 2);
            s.execute(g);
        }
        assertThat(events.events(e -> e.type() == EventType.TASK_PLACED))
                .singleElement()
                .satisfies(e -> {
                    assertThat(e.taskName()).isEqualTo("gemm");
                    DeviceDecision d = e.decision();
                    assertThat(d).isNotNull();
                    assertThat(d.policy()).isEqualTo("gpu-first");
                    assertThat(d.chosen()).isEqualTo(Device.GPU);
                    assertThat(d.used()).isEqualTo(Device.GPU);
                    assertThat(d.task().cpuCostNanos()).isEqualTo(80_000_000);
                    assertThat(d.task().gpuCostNanos()).isEqualTo(2_000_000);
                    assertThat(d.status().devices())
                            .extracting(st -> st.device())
                            .containsExactly(Device.CPU, Device.GPU);
                });
        assertThat(events.events(e -> e.type() == EventType.TASK_STARTED && "gemm".equals(e.taskName())))
                .singleElement()
                .extracting(TaskEvent::device)
                .isEqualTo(Device.GPU);
    }

    @Test
    void aGpuThatIsDownSendsDualTasksToTheCpuAndFailsGpuOnlyTasksNamingTheReason() {
        FakeGpuBackend gpu = new FakeGpuBackend(1);
        gpu.setHealth(DeviceHealth.DOWN, "CUDA_ERROR_ILLEGAL_ADDRESS");
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .policy(new GpuFirstPolicy())
                .gpuBackend(gpu)
                .failureMode(FailureMode.CONTINUE)
                .build()) {
            TaskGraph g = TaskGraph.named("down");
            Task<Integer> dual = g.task("dual").bodies(ctx -> 1, ctx -> 1);
            Task<Integer> gpuOnly = g.task("gpu-only").gpu(ctx -> 2);
            GraphRun run = s.submit(g);
            assertThatThrownBy(run::await)
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(NoDeviceException.class)
                    .rootCause()
                    .hasMessageContaining("task 'gpu-only' has only a GPU body")
                    .hasMessageContaining("DOWN: CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(run.result(dual)).isOne();
            assertThat(run.profile().timing(dual.index()).device()).isEqualTo(Device.CPU);
            assertThat(run.state(gpuOnly)).isEqualTo(TaskState.FAILED);
        }
    }

    @Test
    void aGpuOnlyTaskWithoutAGpuBackendIsRejectedAtSubmit() {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("no-gpu");
            g.task("kernel").gpu(ctx -> 1);
            assertThatThrownBy(() -> s.submit(g))
                    .isInstanceOfSatisfying(GraphValidationException.class, ex -> {
                        assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.NO_DEVICE);
                        assertThat(ex.tasks()).containsExactly("kernel");
                    })
                    .hasMessageContaining("task 'kernel' has only a GPU body")
                    .hasMessageContaining("hts-gpu");
        }
    }

    @Test
    void theLearnedCostModelFeedsTheDefaultPolicy() {
        FakeGpuBackend gpu = new FakeGpuBackend(1);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("learn");
            g.group(
                    "op",
                    30,
                    (i, t) -> t.bodies(
                            ctx -> {
                                Blocking.busyFor(Duration.ofMillis(3));
                                return i;
                            },
                            ctx -> i));
            // The first run may place every task on the CPU (both costs unknown, more free
            // slots there); once the CPU's 3 ms are learned, the idle GPU, unknown and so assumed
            // cheap, gets tasks and is measured too.
            for (int r = 0; r < 5 && s.costModel().estimate("op", Device.GPU) < 0; r++) {
                s.execute(g);
            }
            long cpu = s.costModel().estimate("op", Device.CPU);
            long gpuCost = s.costModel().estimate("op", Device.GPU);
            assertThat(gpuCost).as("the GPU body was measured").isNotNegative();
            if (cpu >= 0) {
                assertThat(cpu)
                        .as("the learned CPU cost (3 ms bodies) against the GPU's")
                        .isGreaterThan(gpuCost);
            }
            // with both costs learned, the default policy (earliest estimated finish) sends most of
            // the group to the device that is 3 ms a task quicker
            GraphRun learned = s.execute(g);
            long onGpu = learned.profile().tasks().stream()
                    .filter(t -> t.device() == Device.GPU)
                    .count();
            assertThat(onGpu)
                    .as("members placed on the GPU once its cost is known")
                    .isGreaterThanOrEqualTo(15);
        }
    }

    @Test
    void aCustomPolicyPlugsInAndAThrowingOneFallsBackToTheCpu() {
        AtomicInteger asked = new AtomicInteger();
        SchedulingPolicy alwaysGpu = new SchedulingPolicy() {
            @Override
            public String name() {
                return "mine";
            }

            @Override
            public Device selectDevice(TaskInfo task, SystemStatus status) {
                asked.incrementAndGet();
                return Device.GPU;
            }
        };
        FakeGpuBackend gpu = new FakeGpuBackend(1);
        try (Scheduler s =
                Scheduler.builder().threads(2).policy(alwaysGpu).gpuBackend(gpu).build()) {
            TaskGroup<Integer>[] sq = holder();
            s.execute(squares(5, sq));
            assertThat(asked.get()).isEqualTo(5);
            assertThat(gpu.ran()).hasSize(5);
            s.setPolicy(new SchedulingPolicy() {
                @Override
                public String name() {
                    return "broken";
                }

                @Override
                public Device selectDevice(TaskInfo task, SystemStatus status) {
                    throw new IllegalStateException("bug in policy");
                }
            });
            GraphRun run = s.execute(squares(5, sq));
            assertThat(run.results(sq[0])).containsExactly(0, 1, 4, 9, 16);
            assertThat(s.policyFailures()).isEqualTo(5);
        }
    }

    @Test
    void shortestJobFirstRunsShortTasksFirstOnABusyWorker() throws Exception {
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .policy(new ShortestJobFirstPolicy())
                .build()) {
            CountDownLatch blocked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            java.util.concurrent.ConcurrentLinkedQueue<String> order =
                    new java.util.concurrent.ConcurrentLinkedQueue<>();
            TaskGraph g = TaskGraph.named("sjf");
            Task<Object> gate = g.task("gate").cpu(ctx -> {
                blocked.countDown();
                release.await(10, TimeUnit.SECONDS);
                return null;
            });
            long[] costs = {50, 10, 40, 20, 30};
            for (long c : costs) {
                g.task("cost-" + c).after(gate).cost(Duration.ofMillis(c)).cpu(ctx -> order.add(ctx.taskName()));
            }
            GraphRun run = s.submit(g);
            assertThat(blocked.await(10, TimeUnit.SECONDS)).isTrue();
            release.countDown();
            run.await();
            assertThat(order).containsExactly("cost-10", "cost-20", "cost-30", "cost-40", "cost-50");
        }
    }

    /** A backend that throws from dispatch (it must not) fails that attempt; the run ends and reports it. */
    @Test
    void aBackendThatThrowsOnDispatchFailsTheTaskNotTheRun() {
        ScriptedBackend broken = new ScriptedBackend(1, (be, task) -> {
            throw new IllegalStateException("dispatch exploded");
        });
        broken.inline = true; // the script runs in dispatch, which throws
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(broken).build()) {
            TaskGraph g = TaskGraph.named("throws");
            Task<Integer> t = g.task("gpu-only").gpu(ctx -> 1);
            GraphRun run = s.submit(g);
            assertThatThrownBy(run::await)
                    .isInstanceOf(GraphRunException.class)
                    .hasStackTraceContaining("dispatch exploded");
            assertThat(run.state(t)).isEqualTo(TaskState.FAILED);
            assertThat(s.activeRuns()).isEmpty();
        }
    }
}
