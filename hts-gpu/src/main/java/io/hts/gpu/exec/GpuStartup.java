package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceBackend;
import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What starting a {@link GpuBackend} on each of a host's chosen GPUs gave: the GPUs that run, as
 * one {@link MultiGpuBackend}, and a DOWN {@link UnusableGpuBackend} for each GPU whose backend threw
 * while starting. The one start loop of HTS: {@link MultiGpuBackend#startOnAllDevices} and the
 * Spring Boot auto-configuration both start through {@link #start}, and each decides what a failure
 * means to it: {@link #backend()} is the backend to use anyway (GPUs reported DOWN, tasks with a CPU
 * body on the CPU), {@link #close()} gives back what started when a failure must stop the caller.
 */
public final class GpuStartup {

    private static final Logger log = LoggerFactory.getLogger(GpuStartup.class);

    private final @Nullable MultiGpuBackend running;
    private final List<UnusableGpuBackend> failed;

    private GpuStartup(@Nullable MultiGpuBackend running, List<UnusableGpuBackend> failed) {
        this.running = running;
        this.failed = List.copyOf(failed);
    }

    /**
     * Starts a backend on each device, in order. Every device's settings are computed before any
     * device starts, so an exception of {@code settings} (a setting the device cannot take)
     * propagates with nothing started. A backend that throws while starting (a CUDA error, no
     * memory, natives that do not link) makes its device a {@linkplain UnusableGpuBackend#failedToStart
     * DOWN one} and the others are still started; nothing is logged above DEBUG: the caller says
     * what the failures mean.
     *
     * @param api the CUDA API the devices were discovered through
     * @param devices the devices: at least one
     * @param settings each device's settings
     * @param loadCublas whether each backend loads cuBLAS
     * @return what started and what did not
     */
    public static GpuStartup start(
            CudaApi api,
            List<DeviceInfo> devices,
            Function<? super DeviceInfo, GpuSettings> settings,
            boolean loadCublas) {
        if (devices.isEmpty()) {
            throw new IllegalArgumentException("no GPU to start");
        }
        List<GpuSettings> each = devices.stream().<GpuSettings>map(settings).toList();
        List<GpuBackend> started = new ArrayList<>();
        List<UnusableGpuBackend> failed = new ArrayList<>();
        for (int i = 0; i < devices.size(); i++) {
            GpuBackend backend = startOne(api, devices.get(i), each.get(i), loadCublas, failed);
            if (backend != null) {
                started.add(backend);
            }
        }
        return new GpuStartup(started.isEmpty() ? null : new MultiGpuBackend(started, api), failed);
    }

    /**
     * Starts one device's backend; what one that throws while starting gives is added to
     * {@code failed}. {@link GpuBackend#startOnFirstDevice} starts through it too.
     *
     * @return the backend, or {@code null} when it could not be started
     */
    static @Nullable GpuBackend startOne(
            CudaApi api, DeviceInfo device, GpuSettings settings, boolean loadCublas, List<UnusableGpuBackend> failed) {
        try {
            return new GpuBackend(api, device, settings, loadCublas);
        } catch (RuntimeException | LinkageError ex) {
            log.debug("HTS GPU backend: {} could not be started", device, ex);
            failed.add(UnusableGpuBackend.failedToStart(device, ex));
            return null;
        }
    }

    /** Whether every GPU started. */
    public boolean complete() {
        return failed.isEmpty();
    }

    /** The GPUs that run, if any does. */
    public Optional<MultiGpuBackend> running() {
        return Optional.ofNullable(running);
    }

    /** The GPUs that could not be started, in the order they were tried. */
    public List<UnusableGpuBackend> failed() {
        return failed;
    }

    /**
     * The backend to use whatever failed: the {@link MultiGpuBackend} when every GPU started, a
     * DEGRADED {@link PartialGpuBackend} when some did, and when none did the DOWN
     * {@link UnusableGpuBackend} of the one GPU, or a DOWN {@link PartialGpuBackend} of them all.
     *
     * @return the backend
     */
    public DeviceBackend backend() {
        MultiGpuBackend gpus = running;
        if (failed.isEmpty() && gpus != null) {
            return gpus;
        }
        if (gpus == null && failed.size() == 1) {
            return failed.get(0);
        }
        return new PartialGpuBackend(gpus, failed);
    }

    /** Why GPUs could not be started, {@code "; "} between them; empty when all started. */
    public String reasons() {
        return failed.stream().map(UnusableGpuBackend::reason).collect(Collectors.joining("; "));
    }

    /** The error of the first GPU that could not be started, if one could not. */
    public Optional<Throwable> firstCause() {
        return failed.stream()
                .map(UnusableGpuBackend::cause)
                .flatMap(Optional::stream)
                .findFirst();
    }

    /** Closes the GPUs that run (when a failure stops the caller). */
    public void close() {
        MultiGpuBackend gpus = running;
        if (gpus != null) {
            gpus.close();
        }
    }

    @Override
    public String toString() {
        return "GpuStartup[" + (running != null ? "running " + running.name() : "none running")
                + (failed.isEmpty() ? "" : "; " + reasons()) + "]";
    }
}
