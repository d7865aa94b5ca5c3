package io.hts.gpu.cuda;

/** What a CUDA error means for the scheduler. */
public enum CudaErrorKind {

    /** Device memory ran out: the attempt may succeed later (retryable). */
    OUT_OF_MEMORY,

    /**
     * A sticky error (an illegal address, a failed launch, a hardware error): the context is
     * poisoned, every later call on it fails, and memory allocated in it must not be reused.
     * The device goes DOWN.
     */
    STICKY,

    /** The driver, device or library is missing or unusable (no driver, no device, wrong version). */
    UNAVAILABLE,

    /** Any other error: the call failed (a bad argument, a missing kernel), the device is fine. */
    OTHER;

    /**
     * Classifies a {@code CUresult} code of the driver API.
     *
     * @param code the code
     * @return its kind
     */
    public static CudaErrorKind of(int code) {
        return switch (code) {
            case 2 -> OUT_OF_MEMORY; // CUDA_ERROR_OUT_OF_MEMORY
            // NOT_INITIALIZED, DEINITIALIZED, STUB_LIBRARY, INSUFFICIENT_DRIVER, DEVICE_UNAVAILABLE, NO_DEVICE,
            // INVALID_DEVICE, JIT_COMPILER_NOT_FOUND, SYSTEM_NOT_READY, SYSTEM_DRIVER_MISMATCH,
            // COMPAT_NOT_SUPPORTED_ON_DEVICE
            case 3, 4, 34, 35, 46, 100, 101, 221, 802, 803, 804 -> UNAVAILABLE;
            // ECC_UNCORRECTABLE, ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, CONTEXT_IS_DESTROYED, ASSERT,
            // HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION, MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE,
            // INVALID_PC, LAUNCH_FAILED, UNKNOWN: the context is unusable from here on
            case 214, 700, 702, 709, 710, 714, 715, 716, 717, 718, 719, 999 -> STICKY;
            default -> OTHER;
        };
    }

    /** Whether a retry of the same work may succeed. */
    public boolean isRetryable() {
        return this == OUT_OF_MEMORY;
    }
}
