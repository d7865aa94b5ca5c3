package io.hts.gpu.cuda;

import java.nio.ByteBuffer;

/**
 * The CUDA driver calls HTS makes, as one small interface: {@link JCudaApi} implements it over
 * JCuda; tests implement it in plain Java to run the memory pool, the stream manager and the GPU
 * backend without a GPU, and to inject errors (an out-of-memory, a sticky illegal address).
 *
 * <p>Device memory is addressed by {@code long} device addresses. Every call applies to the
 * device whose context is current on the calling thread ({@link #makeCurrent}). A failed call
 * throws {@link CudaException} with the code, its name and its {@link CudaErrorKind}.
 */
public interface CudaApi {

    /** A CUDA stream of this API. */
    interface Stream {}

    /** A CUDA event of this API (created without timing, for synchronization). */
    interface Event {}

    /** A loaded module (PTX). */
    interface Module {}

    /** A kernel of a loaded module. */
    interface Function {}

    /** The number of CUDA devices. */
    int deviceCount();

    /**
     * What a device is.
     *
     * @param ordinal from 0
     * @return its name, memory and compute capability
     */
    DeviceInfo deviceInfo(int ordinal);

    /** The driver's CUDA version, e.g. 13000 for 13.0. */
    int driverVersion();

    /**
     * Makes the device's primary context current on the calling thread (retaining it on first use).
     *
     * @param ordinal the device
     */
    void makeCurrent(int ordinal);

    /**
     * Makes the device's primary context current on a thread HTS borrows for a moment (a caller's,
     * which may have a context of its own current), and returns what was current before, for
     * {@link #giveBack}: the thread is left as it was found.
     *
     * @param ordinal the device
     * @return what was current on this thread
     */
    Object borrow(int ordinal);

    /**
     * Makes current again what {@link #borrow} found on this thread.
     *
     * @param previous what {@code borrow} returned, on this thread
     */
    void giveBack(Object previous);

    /** Free and total memory of the current device, in bytes: {@code {free, total}}. */
    long[] memoryInfo();

    /**
     * {@code cuMemAlloc}.
     *
     * @param bytes at least 1
     * @return the device address
     */
    long allocate(long bytes);

    /**
     * {@code cuMemFree}.
     *
     * @param address an address {@link #allocate} returned
     */
    void free(long address);

    /**
     * {@code cuMemAllocHost}: page-locked host memory, which copies use asynchronously.
     *
     * @param bytes at least 1
     * @return a direct buffer over the memory
     */
    ByteBuffer allocatePinned(long bytes);

    /**
     * {@code cuMemFreeHost}.
     *
     * @param buffer a buffer {@link #allocatePinned} returned
     */
    void freePinned(ByteBuffer buffer);

    /** {@code cuStreamCreate} with {@code CU_STREAM_NON_BLOCKING}. */
    Stream createStream();

    /**
     * {@code cuStreamDestroy}.
     *
     * @param stream the stream
     */
    void destroyStream(Stream stream);

    /**
     * {@code cuStreamSynchronize}: waits on the host until the stream's work is done.
     *
     * @param stream the stream
     */
    void synchronize(Stream stream);

    /** {@code cuEventCreate} with {@code CU_EVENT_DISABLE_TIMING}. */
    Event createEvent();

    /**
     * {@code cuEventDestroy}.
     *
     * @param event the event
     */
    void destroyEvent(Event event);

    /**
     * {@code cuEventRecord}: the event completes when the stream's work enqueued so far is done.
     *
     * @param event the event
     * @param stream the stream
     */
    void record(Event event, Stream stream);

    /**
     * {@code cuEventQuery}.
     *
     * @param event the event
     * @return whether the work before it has completed ({@code CUDA_ERROR_NOT_READY} is false)
     * @throws CudaException when that work failed (a sticky error surfaces here)
     */
    boolean isComplete(Event event);

    /**
     * {@code cuEventSynchronize}: waits on the host.
     *
     * @param event the event
     */
    void synchronize(Event event);

    /**
     * {@code cuStreamWaitEvent}: later work on {@code stream} waits, on the device, for the event.
     *
     * @param stream the stream that waits
     * @param event the event it waits for
     */
    void wait(Stream stream, Event event);

    /**
     * {@code cuMemcpyHtoDAsync}: copies {@code bytes} from {@code source}'s position.
     *
     * @param target the device address
     * @param source host memory (pinned for a truly asynchronous copy)
     * @param bytes how many
     * @param stream the stream
     */
    void copyToDevice(long target, ByteBuffer source, long bytes, Stream stream);

    /**
     * {@code cuMemcpyDtoHAsync}: copies {@code bytes} to {@code target}'s position.
     *
     * @param target host memory (pinned for a truly asynchronous copy)
     * @param source the device address
     * @param bytes how many
     * @param stream the stream
     */
    void copyToHost(ByteBuffer target, long source, long bytes, Stream stream);

    /**
     * {@code cuMemcpyDtoDAsync}.
     *
     * @param target the device address written
     * @param source the device address read
     * @param bytes how many
     * @param stream the stream
     */
    void copyOnDevice(long target, long source, long bytes, Stream stream);

    /**
     * {@code cuMemcpyPeerAsync}: copies between the memory of two devices (over NVLink or PCIe
     * directly when peer access is enabled, through the host otherwise).
     *
     * @param target the device address written
     * @param targetDevice its device
     * @param source the device address read
     * @param sourceDevice its device
     * @param bytes how many
     * @param stream the stream (of either device)
     */
    void copyPeer(long target, int targetDevice, long source, int sourceDevice, long bytes, Stream stream);

    /**
     * Lets {@code device} read and write {@code peer}'s memory directly ({@code cuCtxEnablePeerAccess}),
     * when the hardware allows it.
     *
     * @param device the device that accesses
     * @param peer the device accessed
     * @return whether direct access is on (false: peer copies go through the host)
     */
    boolean enablePeerAccess(int device, int peer);

    /**
     * {@code cuMemsetD8Async}.
     *
     * @param target the device address
     * @param value the byte
     * @param bytes how many
     * @param stream the stream
     */
    void fill(long target, byte value, long bytes, Stream stream);

    /**
     * {@code cuModuleLoadData} on PTX text.
     *
     * @param ptx the PTX
     * @return the module
     */
    Module loadModule(String ptx);

    /**
     * {@code cuModuleUnload}: its functions become invalid. Only safe once no work launched from
     * the module can still run on the device.
     *
     * @param module a module {@link #loadModule} returned, not unloaded yet
     */
    void unloadModule(Module module);

    /**
     * {@code cuModuleGetFunction}.
     *
     * @param module the module
     * @param name the kernel's (extern "C") name
     * @return the kernel
     */
    Function function(Module module, String name);

    /**
     * {@code cuLaunchKernel}.
     *
     * @param function the kernel
     * @param grid blocks per grid (x, y, z)
     * @param block threads per block (x, y, z)
     * @param sharedBytes dynamic shared memory per block
     * @param stream the stream
     * @param arguments the kernel's arguments, in order
     */
    void launch(Function function, Dim3 grid, Dim3 block, int sharedBytes, Stream stream, KernelArguments arguments);

    /**
     * {@code cuLaunchHostFunc}: runs {@code callback} on a driver thread once the work enqueued on
     * the stream so far has completed. The callback must be short and must not call CUDA.
     *
     * @param stream the stream
     * @param callback what to run
     */
    void whenDone(Stream stream, Runnable callback);
}
