package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The GPUs of a host of which some could not be started: the ones that run, as a
 * {@link MultiGpuBackend}, and a DOWN {@link UnusableGpuBackend} for each of the others. Tasks go to
 * the running GPUs as the multi-GPU backend places them; a task pinned to a GPU that could not be
 * started is handed to the CPU when it has a CPU body and fails with that GPU's reason otherwise.
 * The status is DEGRADED while a GPU runs (its detail names the GPUs that could not be started and
 * why), DOWN when none does; {@link #deviceStatuses()} has one status per GPU, in ordinal order.
 */
public final class PartialGpuBackend implements DeviceBackend {

    private final @Nullable MultiGpuBackend running;
    private final List<UnusableGpuBackend> failed;
    private final String failures;

    /**
     * Joins the GPUs that run and those that could not be started.
     *
     * @param running the GPUs that run, or {@code null} when none does
     * @param failed the GPUs that could not be started: at least one
     */
    public PartialGpuBackend(@Nullable MultiGpuBackend running, List<UnusableGpuBackend> failed) {
        if (failed.isEmpty()) {
            throw new IllegalArgumentException(
                    "a partial GPU backend needs at least one GPU that could not be started");
        }
        this.running = running;
        this.failed = List.copyOf(failed);
        this.failures = this.failed.stream().map(UnusableGpuBackend::reason).collect(Collectors.joining("; "));
    }

    /** The GPUs that run, if any does. */
    public Optional<MultiGpuBackend> running() {
        return Optional.ofNullable(running);
    }

    /** The GPUs that could not be started. */
    public List<UnusableGpuBackend> failed() {
        return failed;
    }

    @Override
    public Device device() {
        return Device.GPU;
    }

    @Override
    public String name() {
        return running != null
                ? running.name()
                : failed.stream().map(UnusableGpuBackend::name).collect(Collectors.joining(" + "));
    }

    @Override
    public DeviceStatus status() {
        if (running == null) {
            return new DeviceStatus(Device.GPU, DeviceHealth.DOWN, 0, 0, 0, 0, 0, failures);
        }
        DeviceStatus s = running.status();
        return new DeviceStatus(
                Device.GPU,
                s.health() == DeviceHealth.DOWN ? DeviceHealth.DOWN : DeviceHealth.DEGRADED,
                s.capacity(),
                s.queued(),
                s.running(),
                s.backlogNanos(),
                s.freeMemoryBytes(),
                failures + "; running: " + s.detail());
    }

    @Override
    public List<DeviceStatus> deviceStatuses() {
        record Ordered(int ordinal, DeviceStatus status) {}
        List<Ordered> all = new ArrayList<>();
        if (running != null) {
            running.devices().forEach(d -> all.add(new Ordered(d.deviceInfo().ordinal(), d.status())));
        }
        failed.forEach(d -> all.add(new Ordered(d.ordinal(), d.status())));
        all.sort(Comparator.comparingInt(Ordered::ordinal));
        return all.stream().map(Ordered::status).toList();
    }

    @Override
    public boolean assist() {
        MultiGpuBackend gpus = running;
        return gpus != null && gpus.assist();
    }

    @Override
    public boolean isDeviceThread() {
        MultiGpuBackend gpus = running;
        return gpus != null && gpus.isDeviceThread();
    }

    @Override
    public boolean dispatchHere(DeviceTask task) {
        MultiGpuBackend gpus = running;
        return gpus != null
                && failed.stream().noneMatch(d -> d.ordinal() == task.gpuOrdinal())
                && gpus.dispatchHere(task);
    }

    @Override
    public void dispatch(DeviceTask task) {
        int pinned = task.gpuOrdinal();
        for (UnusableGpuBackend d : failed) {
            if (d.ordinal() == pinned && pinned >= 0) {
                d.dispatch(task);
                return;
            }
        }
        if (running != null) {
            running.dispatch(task);
        } else {
            UnusableGpuBackend.refuse(task, name(), failures);
        }
    }

    @Override
    public void onRunCancelled(long runId) {
        if (running != null) {
            running.onRunCancelled(runId);
        }
    }

    @Override
    public void close() {
        if (running != null) {
            running.close();
        }
    }

    @Override
    public String toString() {
        return "PartialGpuBackend[" + name() + "; " + failures + "]";
    }
}
