package io.hts.gpu.kernel;

/** CUDA C source that NVRTC did not compile; the message holds NVRTC's log. */
public class KernelCompilationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed, with the compiler's log
     */
    public KernelCompilationException(String message) {
        super(message);
    }
}
