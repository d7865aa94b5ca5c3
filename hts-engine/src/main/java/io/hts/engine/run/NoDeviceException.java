package io.hts.engine.run;

/** No device that the task has a body for can take work (e.g. a GPU-only task while the GPU is down). */
public class NoDeviceException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which task and why
     */
    public NoDeviceException(String message) {
        super(message);
    }
}
