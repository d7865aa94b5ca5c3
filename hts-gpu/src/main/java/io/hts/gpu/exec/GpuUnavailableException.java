package io.hts.gpu.exec;

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
}
