package io.hts.engine.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Device;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The default policy's arithmetic, case by case, as its Javadoc states it: the device where the
 * task is expected to finish first ((backlog / capacity) + cost), an unknown cost read
 * optimistically on an idle device and as the other device's cost otherwise, ties to more free
 * slots and then to the GPU, unusable devices skipped, and a saturating sum.
 */
class DefaultPolicyTests {

    private static final long MS = 1_000_000;
    private final DefaultPolicy policy = new DefaultPolicy();

    private static TaskInfo both(long cpuCost, long gpuCost) {
        return new TaskInfo("t", "t", Set.of(Device.CPU, Device.GPU), 0, cpuCost, gpuCost);
    }

    private static DeviceStatus cpu(int capacity, int queued, int running, long backlog) {
        return new DeviceStatus(Device.CPU, DeviceHealth.UP, capacity, queued, running, backlog, -1, "cpu");
    }

    private static DeviceStatus gpu(int capacity, int queued, int running, long backlog) {
        return new DeviceStatus(Device.GPU, DeviceHealth.UP, capacity, queued, running, backlog, -1, "gpu");
    }

    @Test
    void theDeviceWhereTheTaskFinishesFirstWins() {
        // CPU: 8 ms backlog over 2 workers = 4 ms wait + 1 ms = 5 ms; GPU: 0 + 3 ms = 3 ms
        assertThat(policy.selectDevice(both(MS, 3 * MS), SystemStatus.of(cpu(2, 1, 2, 8 * MS), gpu(4, 0, 4, 0))))
                .isEqualTo(Device.GPU);
        // the backlog is divided by the capacity: 8 ms over 8 workers = 1 ms wait + 1 ms = 2 ms < 3 ms
        assertThat(policy.selectDevice(both(MS, 3 * MS), SystemStatus.of(cpu(8, 1, 8, 8 * MS), gpu(4, 0, 4, 0))))
                .isEqualTo(Device.CPU);
        // one nanosecond decides
        assertThat(policy.selectDevice(both(MS, MS + 1), SystemStatus.of(cpu(1, 1, 1, 0), gpu(1, 1, 1, 0))))
                .isEqualTo(Device.CPU);
        assertThat(policy.selectDevice(both(MS + 1, MS), SystemStatus.of(cpu(1, 1, 1, 0), gpu(1, 1, 1, 0))))
                .isEqualTo(Device.GPU);
    }

    @Test
    void equalFinishesGoToMoreFreeSlotsThenToTheGpu() {
        // same finish (2 ms), the CPU has 3 free slots, the GPU 1
        assertThat(policy.selectDevice(both(2 * MS, 2 * MS), SystemStatus.of(cpu(4, 0, 1, 0), gpu(2, 0, 1, 0))))
                .isEqualTo(Device.CPU);
        // same finish, the GPU has more free slots
        assertThat(policy.selectDevice(both(2 * MS, 2 * MS), SystemStatus.of(cpu(4, 0, 3, 0), gpu(4, 0, 1, 0))))
                .isEqualTo(Device.GPU);
        // same finish and free slots: the GPU, whichever order the statuses and the task's devices
        // come in (Set.of's order changes from one JVM to the next: both orders are spelled out)
        for (List<Device> order : List.of(List.of(Device.CPU, Device.GPU), List.of(Device.GPU, Device.CPU))) {
            TaskInfo task = new TaskInfo("t", "t", new LinkedHashSet<>(order), 0, 2 * MS, 2 * MS);
            assertThat(policy.selectDevice(task, SystemStatus.of(cpu(2, 0, 1, 0), gpu(2, 0, 1, 0))))
                    .as("devices %s", order)
                    .isEqualTo(Device.GPU);
            assertThat(policy.selectDevice(task, SystemStatus.of(gpu(2, 0, 1, 0), cpu(2, 0, 1, 0))))
                    .as("devices %s", order)
                    .isEqualTo(Device.GPU);
        }
    }

    @Test
    void anUnknownCostIsZeroOnAnIdleDeviceAndTheOtherDevicesCostOnABusyOne() {
        DeviceStatus idle = gpu(2, 0, 1, 0);
        DeviceStatus busy = gpu(2, 1, 2, 0);
        assertThat(DefaultPolicy.cost(both(5 * MS, -1), Device.GPU, idle)).isZero();
        assertThat(DefaultPolicy.cost(both(5 * MS, -1), Device.GPU, busy)).isEqualTo(5 * MS);
        assertThat(DefaultPolicy.cost(both(-1, 7 * MS), Device.CPU, cpu(1, 0, 1, 0)))
                .isEqualTo(7 * MS);
        assertThat(DefaultPolicy.cost(both(-1, -1), Device.GPU, busy))
                .as("neither known")
                .isZero();
        assertThat(DefaultPolicy.cost(both(3 * MS, 4 * MS), Device.GPU, idle))
                .as("its own, known")
                .isEqualTo(4 * MS);
        assertThat(DefaultPolicy.cost(both(3 * MS, 0), Device.GPU, busy))
                .as("a known zero")
                .isZero();
        // a device with nothing queued but every slot running is not idle
        assertThat(DefaultPolicy.cost(both(5 * MS, -1), Device.GPU, gpu(2, 0, 2, 0)))
                .isEqualTo(5 * MS);
    }

    @Test
    void unusableDevicesAreSkippedAndWithNoneTheTaskGoesWhereItHasABody() {
        DeviceStatus down = new DeviceStatus(Device.GPU, DeviceHealth.DOWN, 4, 0, 0, 0, -1, "lost");
        DeviceStatus noSlots = gpu(0, 0, 0, 0);
        assertThat(policy.selectDevice(both(100 * MS, 0), SystemStatus.of(cpu(1, 5, 1, 50 * MS), down)))
                .isEqualTo(Device.CPU);
        assertThat(policy.selectDevice(both(100 * MS, 0), SystemStatus.of(cpu(1, 5, 1, 50 * MS), noSlots)))
                .isEqualTo(Device.CPU);
        assertThat(policy.selectDevice(both(0, 100 * MS), SystemStatus.of(gpu(1, 0, 0, 0))))
                .as("a scheduler without a CPU status")
                .isEqualTo(Device.GPU);
        DeviceStatus cpuDown = new DeviceStatus(Device.CPU, DeviceHealth.DOWN, 2, 0, 0, 0, -1, "shut down");
        TaskInfo gpuOnly = new TaskInfo("g", "g", Set.of(Device.GPU), 0, -1, MS);
        assertThat(policy.selectDevice(gpuOnly, SystemStatus.of(cpuDown, down))).isEqualTo(Device.GPU);
        assertThat(policy.selectDevice(both(MS, MS), SystemStatus.of(cpuDown, down)))
                .isEqualTo(Device.CPU);
        TaskInfo cpuOnly = new TaskInfo("c", "c", Set.of(Device.CPU), 0, MS, -1);
        assertThat(policy.selectDevice(cpuOnly, SystemStatus.of(cpu(1, 9, 1, 90 * MS), gpu(8, 0, 0, 0))))
                .as("a device without a body is never chosen")
                .isEqualTo(Device.CPU);
    }

    @Test
    void aHugeBacklogSaturatesInsteadOfOverflowingToANegativeFinish() {
        // the GPU's wait plus cost overflows a long: it must count as the longest, not as negative
        DeviceStatus swamped = gpu(1, 1, 1, Long.MAX_VALUE - 10);
        assertThat(policy.selectDevice(both(50 * MS, 20 * MS), SystemStatus.of(cpu(1, 1, 1, 100 * MS), swamped)))
                .isEqualTo(Device.CPU);
        DeviceStatus cpuSwamped = cpu(1, 1, 1, Long.MAX_VALUE - 10);
        assertThat(policy.selectDevice(both(20 * MS, 50 * MS), SystemStatus.of(cpuSwamped, gpu(1, 1, 1, 100 * MS))))
                .isEqualTo(Device.GPU);
    }

    @Test
    void firstUsableTakesTheFirstDeviceWithABodyThatTakesWork() {
        SystemStatus up = SystemStatus.of(cpu(1, 0, 0, 0), gpu(1, 0, 0, 0));
        SystemStatus gpuDown =
                SystemStatus.of(cpu(1, 0, 0, 0), new DeviceStatus(Device.GPU, DeviceHealth.DOWN, 1, 0, 0, 0, -1, "x"));
        TaskInfo cpuOnly = new TaskInfo("c", "c", Set.of(Device.CPU), 0, -1, -1);
        assertThat(DefaultPolicy.firstUsable(both(-1, -1), up, Device.GPU, Device.CPU))
                .isEqualTo(Device.GPU);
        assertThat(DefaultPolicy.firstUsable(both(-1, -1), gpuDown, Device.GPU, Device.CPU))
                .isEqualTo(Device.CPU);
        assertThat(DefaultPolicy.firstUsable(cpuOnly, up, Device.GPU, Device.CPU))
                .isEqualTo(Device.CPU);
        assertThat(DefaultPolicy.firstUsable(cpuOnly, SystemStatus.of(gpu(1, 0, 0, 0)), Device.GPU, Device.CPU))
                .isNull();
    }
}
