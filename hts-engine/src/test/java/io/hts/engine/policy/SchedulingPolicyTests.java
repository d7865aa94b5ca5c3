package io.hts.engine.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Device;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class SchedulingPolicyTests {

    private static final Set<Device> BOTH = EnumSet.allOf(Device.class);

    private static DeviceStatus cpu(int capacity, int queued, int running, long backlogNanos) {
        return new DeviceStatus(Device.CPU, DeviceHealth.UP, capacity, queued, running, backlogNanos, -1, "cpu");
    }

    private static DeviceStatus gpu(DeviceHealth health, int capacity, int queued, int running, long backlogNanos) {
        return new DeviceStatus(Device.GPU, health, capacity, queued, running, backlogNanos, 1L << 30, "gpu");
    }

    private static TaskInfo task(long cpuNanos, long gpuNanos) {
        return new TaskInfo("t", "t", BOTH, 0, cpuNanos, gpuNanos);
    }

    @Test
    void defaultPicksTheEarliestEstimatedFinish() {
        DefaultPolicy policy = new DefaultPolicy();
        SystemStatus idle = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.UP, 4, 0, 0, 0));
        assertThat(policy.selectDevice(task(10_000_000, 1_000_000), idle)).isEqualTo(Device.GPU);
        assertThat(policy.selectDevice(task(1_000_000, 10_000_000), idle)).isEqualTo(Device.CPU);
        // The GPU is ten times faster but has 400 ms of backlog over 4 streams: 100 ms wait + 1 ms.
        SystemStatus gpuBusy = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.UP, 4, 40, 4, 400_000_000));
        assertThat(policy.selectDevice(task(10_000_000, 1_000_000), gpuBusy)).isEqualTo(Device.CPU);
        // The CPU is saturated: 8 workers with 800 ms of backlog.
        SystemStatus cpuBusy = SystemStatus.of(cpu(8, 100, 8, 800_000_000), gpu(DeviceHealth.UP, 4, 0, 0, 0));
        assertThat(policy.selectDevice(task(1_000_000, 10_000_000), cpuBusy)).isEqualTo(Device.GPU);
    }

    @Test
    void defaultTriesAnIdleDeviceWhoseCostIsUnknownAndSkipsADownOne() {
        DefaultPolicy policy = new DefaultPolicy();
        SystemStatus gpuIdle = SystemStatus.of(cpu(8, 4, 8, 40_000_000), gpu(DeviceHealth.UP, 4, 0, 0, 0));
        assertThat(policy.selectDevice(task(5_000_000, -1), gpuIdle))
                .as("explore the idle GPU")
                .isEqualTo(Device.GPU);
        SystemStatus gpuDown = SystemStatus.of(cpu(8, 4, 8, 40_000_000), gpu(DeviceHealth.DOWN, 4, 0, 0, 0));
        assertThat(policy.selectDevice(task(5_000_000, 1), gpuDown)).isEqualTo(Device.CPU);
        SystemStatus bothIdleUnknown = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.UP, 4, 0, 0, 0));
        assertThat(policy.selectDevice(task(-1, -1), bothIdleUnknown))
                .as("tie: more free slots")
                .isEqualTo(Device.CPU);
    }

    @Test
    void gpuFirstAndCpuFirstPreferTheirDeviceWhenUsable() {
        SystemStatus gpuBusy = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.UP, 4, 1000, 4, Long.MAX_VALUE / 2));
        assertThat(new GpuFirstPolicy().selectDevice(task(1, 1_000_000_000), gpuBusy))
                .isEqualTo(Device.GPU);
        assertThat(new CpuFirstPolicy().selectDevice(task(1_000_000_000, 1), gpuBusy))
                .isEqualTo(Device.CPU);
        SystemStatus gpuDown = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.DOWN, 4, 0, 0, 0));
        assertThat(new GpuFirstPolicy().selectDevice(task(1, 1), gpuDown)).isEqualTo(Device.CPU);
        TaskInfo gpuOnly = new TaskInfo("g", "g", EnumSet.of(Device.GPU), 0, -1, -1);
        SystemStatus up = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.DEGRADED, 4, 0, 0, 0));
        assertThat(new CpuFirstPolicy().selectDevice(gpuOnly, up)).isEqualTo(Device.GPU);
    }

    @Test
    void roundRobinAlternatesOverUsableDevices() {
        RoundRobinPolicy policy = new RoundRobinPolicy();
        SystemStatus up = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.UP, 4, 0, 0, 0));
        assertThat(policy.selectDevice(task(1, 1), up)).isEqualTo(Device.CPU);
        assertThat(policy.selectDevice(task(1, 1), up)).isEqualTo(Device.GPU);
        assertThat(policy.selectDevice(task(1, 1), up)).isEqualTo(Device.CPU);
        SystemStatus down = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.DOWN, 4, 0, 0, 0));
        assertThat(policy.selectDevice(task(1, 1), down)).isEqualTo(Device.CPU);
        assertThat(policy.selectDevice(task(1, 1), down)).isEqualTo(Device.CPU);
    }

    @Test
    void shortestJobFirstOrdersByCostAndPlacesByFinishTime() {
        ShortestJobFirstPolicy policy = new ShortestJobFirstPolicy();
        assertThat(policy.readyOrder()).isEqualTo(ReadyOrder.SHORTEST_FIRST);
        assertThat(new DefaultPolicy().readyOrder()).isEqualTo(ReadyOrder.PRIORITY);
        SystemStatus idle = SystemStatus.of(cpu(8, 0, 0, 0), gpu(DeviceHealth.UP, 4, 0, 0, 0));
        assertThat(policy.selectDevice(task(10_000_000, 1_000_000), idle)).isEqualTo(Device.GPU);
    }

    @Test
    void policyTypesResolveByConfigurationNameAndRejectUnknownOnesListingTheAccepted() {
        assertThat(PolicyType.fromId("gpu-first").create()).isInstanceOf(GpuFirstPolicy.class);
        assertThat(PolicyType.fromId("SHORTEST_JOB_FIRST").create().name()).isEqualTo("shortest-job-first");
        assertThatThrownBy(() -> PolicyType.fromId("fastest"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'fastest'")
                .hasMessageContaining("default, gpu-first, cpu-first, round-robin, shortest-job-first");
    }

    @ParameterizedTest
    @EnumSource(PolicyType.class)
    void eachPolicyTypeCreatesThePolicyNamedByItsId(PolicyType t) {
        assertThat(t.create().name()).isEqualTo(t.id());
    }

    @Test
    void theCostModelLearnsAMovingAveragePerNameAndDevice() {
        CostModel model = new CostModel(0.5);
        assertThat(model.estimate("gemm", Device.GPU)).isEqualTo(-1);
        model.record("gemm", Device.GPU, 1000);
        model.record("gemm", Device.GPU, 2000);
        model.record("gemm", Device.CPU, 50_000);
        assertThat(model.estimate("gemm", Device.GPU)).isEqualTo(1500);
        assertThat(model.estimate("gemm", Device.CPU)).isEqualTo(50_000);
        assertThat(model.snapshot()).containsKey("gemm");
        assertThatThrownBy(() -> new CostModel(0)).hasMessageContaining("(0, 1]");
    }

    @Test
    void aTaskInfoKnowsItsCostPerDeviceAndZeroIsKnown() {
        TaskInfo cpuKnown = task(5, -1);
        assertThat(cpuKnown.estimatedCost(Device.CPU)).hasValue(5);
        assertThat(cpuKnown.estimatedCost(Device.GPU)).isEmpty();
        assertThat(task(-1, 0).estimatedCost(Device.GPU)).hasValue(0);
        assertThat(task(-1, 0).estimatedCost(Device.CPU)).isEmpty();
    }

    @Test
    void aDeviceWithoutCapacityIsNotUsableAndItsWaitIsEndless() {
        DeviceStatus none = cpu(0, 0, 0, 1_000);
        assertThat(none.usable()).isFalse();
        assertThat(none.estimatedWaitNanos()).isEqualTo(Long.MAX_VALUE);
        DeviceStatus one = cpu(1, 0, 0, 1_000);
        assertThat(one.usable()).isTrue();
        assertThat(one.estimatedWaitNanos()).isEqualTo(1_000);
        SystemStatus status = SystemStatus.of(one);
        assertThat(status.find(Device.CPU)).contains(one);
        assertThat(status.find(Device.GPU)).isEmpty();
        assertThat(status.usable(Device.GPU)).isFalse();
    }

    @Test
    void defaultBreaksATieOfFinishTimesByFreeSlotsCountingQueuedAndRunningTasks() {
        DefaultPolicy policy = new DefaultPolicy();
        TaskInfo same = task(1_000, 1_000);
        // no backlog anywhere: both finish at 1 us; 8 slots less 6 queued leave the CPU 2, the GPU has 4
        assertThat(policy.selectDevice(same, SystemStatus.of(cpu(8, 6, 0, 0), gpu(DeviceHealth.UP, 4, 0, 0, 0))))
                .isEqualTo(Device.GPU);
        assertThat(policy.selectDevice(same, SystemStatus.of(cpu(8, 0, 6, 0), gpu(DeviceHealth.UP, 4, 0, 0, 0))))
                .isEqualTo(Device.GPU);
        assertThat(policy.selectDevice(same, SystemStatus.of(cpu(8, 1, 1, 0), gpu(DeviceHealth.UP, 4, 0, 0, 0))))
                .isEqualTo(Device.CPU);
    }

    @Test
    void defaultTakesAnOverflowingFinishTimeAsTheLatest() {
        // the CPU's wait and cost add up past Long.MAX_VALUE: later than the GPU's huge but finite finish
        SystemStatus status = SystemStatus.of(cpu(1, 0, 1, Long.MAX_VALUE - 10), gpu(DeviceHealth.UP, 4, 0, 0, 0));
        assertThat(new DefaultPolicy().selectDevice(task(100, Long.MAX_VALUE - 1), status))
                .isEqualTo(Device.GPU);
    }

    @Test
    void cpuFirstRunsATaskOnTheGpuWhenTheCpuCannotTakeIt() {
        SystemStatus cpuFull = SystemStatus.of(cpu(0, 0, 0, 0), gpu(DeviceHealth.UP, 4, 0, 0, 0));
        assertThat(new CpuFirstPolicy().selectDevice(task(1, 1), cpuFull)).isEqualTo(Device.GPU);
    }

    @Test
    void theCostModelTakesAFirstSampleOfZeroAsKnownAndAveragesFromIt() {
        CostModel model = new CostModel(0.5);
        for (Device d : Device.values()) {
            model.record("noop", d, 0);
            assertThat(model.estimate("noop", d)).as("%s", d).isZero();
            model.record("noop", d, 100);
            assertThat(model.estimate("noop", d)).as("%s", d).isEqualTo(50);
            model.record("noop", d, 150);
            assertThat(model.estimate("noop", d)).as("%s", d).isEqualTo(100);
        }
        assertThat(model.snapshot().get("noop"))
                .containsExactly(
                        java.util.Map.entry(Device.CPU, java.time.Duration.ofNanos(100)),
                        java.util.Map.entry(Device.GPU, java.time.Duration.ofNanos(100)));
        CostModel zero = new CostModel();
        zero.record("free", Device.GPU, 0);
        assertThat(zero.snapshot().get("free")).containsOnlyKeys(Device.GPU);
    }

    @Test
    void theCostModelForgetsTheLeastRecentlyUsedNameBeyondItsBound() {
        CostModel model = new CostModel();
        for (int i = 0; i < CostModel.MAX_NAMES; i++) {
            model.record("n" + i, Device.CPU, i + 1);
        }
        assertThat(model.estimate("n0", Device.CPU))
                .as("all %d names kept", CostModel.MAX_NAMES)
                .isOne();
        model.record("new", Device.CPU, 7);
        assertThat(model.estimate("new", Device.CPU)).isEqualTo(7);
        assertThat(model.estimate("n0", Device.CPU)).as("just used").isOne();
        assertThat(model.estimate("n1", Device.CPU))
                .as("the least recently used")
                .isEqualTo(-1);
        assertThat(model.snapshot()).hasSize(CostModel.MAX_NAMES);
    }

    @Test
    void theCostModelAcceptsAWeightOfOneThatKeepsOnlyTheLatestSample() {
        CostModel latest = new CostModel(1);
        latest.record("t", Device.CPU, 100);
        latest.record("t", Device.CPU, 300);
        assertThat(latest.estimate("t", Device.CPU)).isEqualTo(300);
        assertThatThrownBy(() -> new CostModel(1.5)).hasMessage("weight must be in (0, 1], was 1.5");
    }
}
