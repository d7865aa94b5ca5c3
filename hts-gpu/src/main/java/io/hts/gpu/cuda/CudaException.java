package io.hts.gpu.cuda;

import org.jspecify.annotations.Nullable;

/**
 * A failed CUDA call: the call, the error's code and name ({@code CUDA_ERROR_ILLEGAL_ADDRESS}) and
 * what it means for the scheduler ({@link #kind()}).
 */
public class CudaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int code;
    private final String errorName;
    private final CudaErrorKind kind;

    /**
     * Creates the exception.
     *
     * @param call the CUDA call that failed, e.g. {@code cuMemAlloc(1048576)}
     * @param code the {@code CUresult}
     * @param errorName the code's name, e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}
     */
    public CudaException(String call, int code, String errorName) {
        super(call + " failed: " + errorName + " (" + code + ")");
        this.code = code;
        this.errorName = errorName;
        this.kind = CudaErrorKind.of(code);
    }

    /** The {@code CUresult} code. */
    public int code() {
        return code;
    }

    /** The code's name, e.g. {@code CUDA_ERROR_ILLEGAL_ADDRESS}. */
    public String errorName() {
        return errorName;
    }

    /** What the error means: retryable, sticky (device down), unavailable, or other. */
    public CudaErrorKind kind() {
        return kind;
    }

    /**
     * The sticky CUDA error in a cause chain, if there is one.
     *
     * @param error an error, or null
     * @return the first {@link CudaErrorKind#STICKY} CUDA error among it and its causes, or null
     */
    public static @Nullable CudaException stickyIn(@Nullable Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof CudaException c && c.kind == CudaErrorKind.STICKY) {
                return c;
            }
        }
        return null;
    }
}
