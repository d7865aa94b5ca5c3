package io.hts.gpu.exec;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.GpuDiscovery;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The backend of a GPU that is present but could not be started: its {@link GpuBackend} threw while
 * starting (a sticky CUDA error left by another process's work, no memory), or discovery found
 * devices it could not query. It is always DOWN with the reason and has no capacity, so the
 * policies place every task that has a CPU body on the CPU and the engine fails a GPU-only task
 * with the reason ({@code NoDeviceException}). A task dispatched here all the same (one pinned to
 * this device on a host whose other GPUs run) is handed to the CPU when it has a CPU body, and
 * otherwise fails with a {@link GpuUnavailableException} naming the task, the device and the
 * reason.
 */
public final class UnusableGpuBackend implements DeviceBackend {

    private final int ordinal;
    private final String name;
    private final String problem;
    private final @Nullable Throwable cause;

    /**
     * Creates the backend.
     *
     * @param ordinal the device's ordinal, or -1 when the backend stands for every GPU of the host
     * @param name the device, e.g. {@code cuda:0 NVIDIA H200}
     * @param problem what is wrong with it, e.g. {@code could not be started: cuMemAlloc(...) failed: ...}
     * @param cause the error that made it unusable, if there is one
     */
    public UnusableGpuBackend(int ordinal, String name, String problem, @Nullable Throwable cause) {
        this.ordinal = ordinal;
        this.name = name;
        this.problem = problem;
        this.cause = cause;
    }

    /**
     * A device whose backend threw while starting.
     *
     * @param device the device
     * @param error what the backend's constructor threw
     * @return the DOWN backend of that device
     */
    public static UnusableGpuBackend failedToStart(DeviceInfo device, Throwable error) {
        return new UnusableGpuBackend(
                device.ordinal(),
                "cuda:" + device.ordinal() + " " + device.name(),
                "could not be started: " + describe(error),
                error);
    }

    /**
     * The GPUs of a host that discovery found but could not query
     * ({@link GpuDiscovery.Result#presentButUnusable()}).
     *
     * @param found what discovery found
     * @return a DOWN backend standing for all of them
     */
    public static UnusableGpuBackend undiscovered(GpuDiscovery.Result found) {
        return new UnusableGpuBackend(
                -1, found.deviceCount() + " CUDA device(s)", "cannot be used: " + found.reason(), null);
    }

    /** The device's ordinal, or -1 when this backend stands for every GPU of the host. */
    public int ordinal() {
        return ordinal;
    }

    /** What is wrong with the device, e.g. {@code could not be started: cuMemAlloc(...) failed: ...}. */
    public String problem() {
        return problem;
    }

    /** The device and what is wrong with it: its status's detail. */
    public String reason() {
        return name + " " + problem;
    }

    /** The error that made the device unusable, if there is one. */
    public Optional<Throwable> cause() {
        return Optional.ofNullable(cause);
    }

    /** The CUDA error's name (e.g. {@code CUDA_ERROR_ILLEGAL_ADDRESS}) when a CUDA call failed. */
    public Optional<String> errorName() {
        return Optional.ofNullable(cudaError(cause)).map(CudaException::errorName);
    }

    @Override
    public Device device() {
        return Device.GPU;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public DeviceStatus status() {
        return new DeviceStatus(Device.GPU, DeviceHealth.DOWN, 0, 0, 0, 0, 0, reason());
    }

    @Override
    public void dispatch(DeviceTask task) {
        refuse(task, name, reason());
    }

    /**
     * Hands a task to the CPU, or fails it when it has no CPU body.
     *
     * @param task the task
     * @param device the device that cannot run it
     * @param reason why
     */
    static void refuse(DeviceTask task, String device, String reason) {
        if (!task.fallBackToCpu(reason)) {
            task.fail(new GpuUnavailableException(
                    "task '" + task.taskName() + "' cannot run on " + device + ": " + reason));
        }
    }

    /** A CUDA error's call, name and code, wherever it is in the chain; otherwise the error itself. */
    private static String describe(Throwable error) {
        CudaException cuda = cudaError(error);
        return cuda != null ? cuda.getMessage() : error.toString();
    }

    private static @Nullable CudaException cudaError(@Nullable Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof CudaException c) {
                return c;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "UnusableGpuBackend[" + reason() + "]";
    }
}
