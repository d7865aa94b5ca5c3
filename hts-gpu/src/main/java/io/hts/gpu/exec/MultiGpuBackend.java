package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.memory.DeviceBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongFunction;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every GPU of a host as one backend: one {@link GpuBackend} per device (its own context, streams,
 * memory pool and launcher), and a placement rule for each GPU task:
 * <ol>
 * <li>a task pinned to a device ({@code TaskBuilder.onGpu}) goes there;</li>
 * <li>otherwise to the usable device holding the most bytes of its inputs (device buffers its
 * predecessors produced), so data stays where it is;</li>
 * <li>otherwise to the least loaded usable device (tasks queued and running per stream, then the
 * estimated backlog).</li>
 * </ol>
 * A task that follows work on another device waits for that device's event on the device; a body
 * that reads a buffer of another device brings it over with {@link GpuContext#onThisDevice}. Peer
 * access is enabled between every pair of devices that allows it. The policies see one GPU
 * device kind whose capacity is the sum of the devices' streams.
 */
public final class MultiGpuBackend implements DeviceBackend {

    private static final Logger log = LoggerFactory.getLogger(MultiGpuBackend.class);

    private final List<GpuBackend> devices;
    private final AtomicLongArray placed;

    /**
     * Joins running backends, one per device.
     *
     * @param devices at least one, each of a different device of the same {@link CudaApi}
     * @param api the CUDA API they share (for peer access)
     */
    public MultiGpuBackend(List<GpuBackend> devices, CudaApi api) {
        if (devices.isEmpty()) {
            throw new IllegalArgumentException("a multi-GPU backend needs at least one GPU backend");
        }
        this.devices = List.copyOf(devices);
        this.placed = new AtomicLongArray(devices.size());
        for (GpuBackend d : this.devices) {
            List<GpuBackend> others = new ArrayList<>(this.devices);
            others.remove(d);
            d.peers(others);
            for (GpuBackend o : others) {
                int from = d.deviceInfo().ordinal();
                int to = o.deviceInfo().ordinal();
                try {
                    if (!api.enablePeerAccess(from, to)) {
                        log.info(
                                "HTS: cuda:{} cannot access cuda:{} directly; copies between them go through the host",
                                from,
                                to);
                    }
                } catch (RuntimeException ex) {
                    log.warn("HTS: peer access cuda:{} -> cuda:{} could not be enabled: {}", from, to, ex.toString());
                }
            }
        }
    }

    /**
     * Discovers the GPUs and starts a backend on each ({@link GpuStartup#start}), or explains why not.
     * A GPU that cannot be started is left out, with a warning; the others are used.
     *
     * @param settings each backend's settings, from its device's total memory
     * @return the backend, or empty (the reason is logged once) when no GPU can be used
     */
    public static Optional<MultiGpuBackend> startOnAllDevices(LongFunction<GpuSettings> settings) {
        GpuDiscovery.Result found = GpuDiscovery.discover();
        CudaApi api = found.api();
        if (!found.available() || api == null) {
            return Optional.empty();
        }
        GpuStartup startup = GpuStartup.start(api, found.devices(), d -> settings.apply(d.totalMemory()), true);
        for (UnusableGpuBackend down : startup.failed()) {
            log.warn("HTS GPU backend: {}; the other devices are used", down.reason());
        }
        return startup.running();
    }

    /** The per-device backends, in device order. */
    public List<GpuBackend> devices() {
        return devices;
    }

    /**
     * How many tasks were placed on each device since start.
     *
     * @return counts in {@link #devices()} order
     */
    public long[] placements() {
        long[] out = new long[placed.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = placed.get(i);
        }
        return out;
    }

    @Override
    public Device device() {
        return Device.GPU;
    }

    @Override
    public String name() {
        return devices.stream().map(GpuBackend::name).collect(Collectors.joining(" + "));
    }

    @Override
    public DeviceStatus status() {
        int capacity = 0;
        int queued = 0;
        int running = 0;
        long backlog = 0;
        long freeMemory = 0;
        int usable = 0;
        int up = 0;
        StringBuilder detail = new StringBuilder();
        for (GpuBackend d : devices) {
            DeviceStatus s = d.status();
            if (s.usable()) {
                usable++;
                capacity += s.capacity();
                freeMemory = Math.max(freeMemory, s.freeMemoryBytes()); // one task lands on one device
            }
            if (s.health() == DeviceHealth.UP) {
                up++;
            }
            queued += s.queued();
            running += s.running();
            backlog += s.backlogNanos();
            detail.append(detail.length() == 0 ? "" : "; ")
                    .append("cuda:")
                    .append(d.deviceInfo().ordinal())
                    .append(' ')
                    .append(s.health())
                    .append(s.health() == DeviceHealth.UP ? "" : " (" + s.detail() + ")");
        }
        DeviceHealth health =
                usable == 0 ? DeviceHealth.DOWN : up == devices.size() ? DeviceHealth.UP : DeviceHealth.DEGRADED;
        return new DeviceStatus(
                Device.GPU,
                health,
                capacity,
                queued,
                running,
                backlog,
                freeMemory,
                devices.size() + " GPUs: " + detail);
    }

    @Override
    public List<DeviceStatus> deviceStatuses() {
        return devices.stream().map(GpuBackend::status).toList();
    }

    @Override
    public void dispatch(DeviceTask task) {
        int i = place(task);
        if (i < 0) {
            String reason = "task '" + task.taskName() + "' is pinned to cuda:" + task.gpuOrdinal() + ", but HTS runs "
                    + name();
            if (!task.fallBackToCpu(reason)) {
                task.fail(new GpuUnavailableException(reason));
            }
            return;
        }
        placed.incrementAndGet(i);
        devices.get(i).dispatch(task);
    }

    @Override
    public boolean dispatchHere(DeviceTask task) {
        int i = place(task);
        if (i < 0 || !devices.get(i).dispatchHere(task)) {
            return false; // dispatch places it again, or refuses it
        }
        placed.incrementAndGet(i);
        return true;
    }

    /** The index in {@link #devices()} of the device for a task; -1 when it is pinned to a device not here. */
    int place(DeviceTask task) {
        int pinned = task.gpuOrdinal();
        if (devices.size() == 1) {
            return pinned < 0 || pinned == devices.get(0).deviceInfo().ordinal() ? 0 : -1;
        }
        if (pinned >= 0) {
            for (int i = 0; i < devices.size(); i++) {
                if (devices.get(i).deviceInfo().ordinal() == pinned) {
                    return i; // that backend runs it, or hands it to the CPU / fails it if it is down
                }
            }
            return -1;
        }
        long[] bytes = new long[devices.size()];
        for (Object input : task.inputs()) {
            if (input instanceof DeviceBuffer b && !b.isReleased()) {
                for (int i = 0; i < devices.size(); i++) {
                    if (devices.get(i).deviceInfo().ordinal() == b.device()) {
                        bytes[i] += b.bytes();
                    }
                }
            }
        }
        int best = -1;
        DeviceStatus bestStatus = null;
        for (int i = 0; i < devices.size(); i++) {
            DeviceStatus s = devices.get(i).status();
            if (!s.usable()) {
                continue;
            }
            if (best < 0 || better(bytes[i], s, bytes[best], bestStatus)) {
                best = i;
                bestStatus = s;
            }
        }
        return best < 0 ? 0 : best; // none usable: the first refuses it with its reason
    }

    /** More input bytes wins; then fewer tasks per stream; then the shorter backlog. */
    private static boolean better(long bytes, DeviceStatus s, long bestBytes, DeviceStatus best) {
        if (bytes != bestBytes) {
            return bytes > bestBytes;
        }
        long load = (long) (s.queued() + s.running()) * best.capacity();
        long bestLoad = (long) (best.queued() + best.running()) * s.capacity();
        if (load != bestLoad) {
            return load < bestLoad;
        }
        return s.backlogNanos() < best.backlogNanos();
    }

    @Override
    public boolean assist() {
        boolean busy = false;
        for (GpuBackend d : devices) {
            busy |= d.assist();
        }
        return busy;
    }

    @Override
    public boolean isDeviceThread() {
        for (GpuBackend d : devices) {
            if (d.isDeviceThread()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void onRunCancelled(long runId) {
        devices.forEach(d -> d.onRunCancelled(runId));
    }

    @Override
    public void close() {
        devices.forEach(GpuBackend::close);
    }

    @Override
    public String toString() {
        return "MultiGpuBackend[" + name() + "]";
    }
}
