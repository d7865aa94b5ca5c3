package io.hts.gpu.exec;

import org.jspecify.annotations.Nullable;

/** A GPU task that cannot run because its device is down or its backend is closing. */
public class GpuUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which task, which device, and why
     */
    public GpuUnavailableException(String message) {
        super(message);
    }

    /**
     * Creates the exception with the error that took the device down.
     *
     * @param message which task, which device, and why
     * @param cause the device's error (a sticky CUDA error), or null
     */
    public GpuUnavailableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
