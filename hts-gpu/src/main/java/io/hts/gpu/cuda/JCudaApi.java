package io.hts.gpu.cuda;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
import org.jspecify.annotations.Nullable;

/**
 * {@link CudaApi} over JCuda's driver API ({@code libcuda.so.1} only, so it works on CUDA 12 and
 * CUDA 13 drivers alike). JCuda's own exceptions are turned off: every call's {@code CUresult} is
 * checked here and turned into a {@link CudaException} that names the call and the error.
 */
public final class JCudaApi implements CudaApi {

    private static final CUdeviceptr NULL = new CUdeviceptr();

    private final CUcontext[] contexts;
    private final ThreadLocal<Integer> current = ThreadLocal.withInitial(() -> -1);
    private final Map<ByteBuffer, Pointer> pinned = Collections.synchronizedMap(new IdentityHashMap<>());

    private record JStream(CUstream handle) implements Stream {}

    private record JEvent(CUevent handle) implements Event {}

    private record JModule(CUmodule handle) implements Module {}

    private record JFunction(CUfunction handle, String name) implements Function {}

    /** A device pointer whose address can be read back (JCuda keeps it protected). */
    private static final class AllocatedPointer extends CUdeviceptr {
        long address() {
            return getNativePointer();
        }
    }

    private JCudaApi() {
        JCudaDriver.setExceptionsEnabled(false);
        check("cuInit(0)", JCudaDriver.cuInit(0));
        int[] count = new int[1];
        check("cuDeviceGetCount", JCudaDriver.cuDeviceGetCount(count));
        contexts = new CUcontext[count[0]];
    }

    /**
     * Loads JCuda's natives and initializes the driver.
     *
     * @return the API
     * @throws CudaException when the driver refuses (no device, driver too old)
     * @throws LinkageError when JCuda's natives or {@code libcuda.so.1} cannot be loaded
     */
    public static JCudaApi load() {
        return new JCudaApi();
    }

    static void check(String call, int result) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new CudaException(call, result, CUresult.stringFor(result));
        }
    }

    private static CUdeviceptr at(long address) {
        return NULL.withByteOffset(address);
    }

    /**
     * A JCuda pointer to a device address, for libraries called directly through JCuda (cuBLAS).
     *
     * @param address the device address
     * @return the pointer
     */
    public static CUdeviceptr pointer(long address) {
        return at(address);
    }

    /**
     * The JCuda stream behind a stream of this API, for libraries called through JCuda.
     *
     * @param stream a stream this API created
     * @return its JCuda handle
     */
    public static CUstream handle(Stream stream) {
        if (!(stream instanceof JStream s)) {
            throw new IllegalArgumentException("not a JCuda stream: " + stream);
        }
        return s.handle();
    }

    @Override
    public int deviceCount() {
        return contexts.length;
    }

    @Override
    public DeviceInfo deviceInfo(int ordinal) {
        CUdevice device = device(ordinal);
        byte[] name = new byte[256];
        check("cuDeviceGetName", JCudaDriver.cuDeviceGetName(name, name.length, device));
        int length = 0;
        while (length < name.length && name[length] != 0) {
            length++;
        }
        long[] memory = new long[1];
        check("cuDeviceTotalMem", JCudaDriver.cuDeviceTotalMem(memory, device));
        return new DeviceInfo(
                ordinal,
                new String(name, 0, length, StandardCharsets.US_ASCII),
                memory[0],
                attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
    }

    private static CUdevice device(int ordinal) {
        CUdevice device = new CUdevice();
        check("cuDeviceGet(" + ordinal + ")", JCudaDriver.cuDeviceGet(device, ordinal));
        return device;
    }

    private static int attribute(CUdevice device, int attribute) {
        int[] value = new int[1];
        check("cuDeviceGetAttribute(" + attribute + ")", JCudaDriver.cuDeviceGetAttribute(value, attribute, device));
        return value[0];
    }

    @Override
    public int driverVersion() {
        int[] version = new int[1];
        check("cuDriverGetVersion", JCudaDriver.cuDriverGetVersion(version));
        return version[0];
    }

    @Override
    public void makeCurrent(int ordinal) {
        if (current.get() == ordinal) {
            return;
        }
        check("cuCtxSetCurrent(" + ordinal + ")", JCudaDriver.cuCtxSetCurrent(context(ordinal)));
        current.set(ordinal);
    }

    /**
     * What was current on a borrowed thread: the driver's context ({@code null} when it was already
     * the device's, so that nothing is to be set back), and this class's note of it.
     */
    private record Borrowed(@Nullable CUcontext context, int noted) {}

    @Override
    public Object borrow(int ordinal) {
        CUcontext before = new CUcontext();
        check("cuCtxGetCurrent", JCudaDriver.cuCtxGetCurrent(before));
        CUcontext target = context(ordinal);
        int noted = current.get();
        current.set(ordinal);
        if (before.equals(target)) {
            return new Borrowed(null, noted); // a waiter's every poll: one driver call, not three
        }
        check("cuCtxSetCurrent(" + ordinal + ")", JCudaDriver.cuCtxSetCurrent(target));
        return new Borrowed(before, noted);
    }

    @Override
    public void giveBack(Object previous) {
        Borrowed b = (Borrowed) previous;
        current.set(b.noted());
        if (b.context() != null) {
            check("cuCtxSetCurrent", JCudaDriver.cuCtxSetCurrent(b.context())); // none current before: unbinds
        }
    }

    /** The device's primary context, retained on first use. */
    private CUcontext context(int ordinal) {
        synchronized (contexts) {
            CUcontext context = contexts[ordinal];
            if (context == null) {
                context = new CUcontext();
                check(
                        "cuDevicePrimaryCtxRetain(" + ordinal + ")",
                        JCudaDriver.cuDevicePrimaryCtxRetain(context, device(ordinal)));
                contexts[ordinal] = context;
            }
            return context;
        }
    }

    @Override
    public long[] memoryInfo() {
        long[] free = new long[1];
        long[] total = new long[1];
        check("cuMemGetInfo", JCudaDriver.cuMemGetInfo(free, total));
        return new long[] {free[0], total[0]};
    }

    @Override
    public long allocate(long bytes) {
        AllocatedPointer p = new AllocatedPointer();
        check("cuMemAlloc(" + bytes + ")", JCudaDriver.cuMemAlloc(p, bytes));
        return p.address();
    }

    @Override
    public void free(long address) {
        check("cuMemFree", JCudaDriver.cuMemFree(at(address)));
    }

    @Override
    public ByteBuffer allocatePinned(long bytes) {
        Pointer p = new Pointer();
        check("cuMemAllocHost(" + bytes + ")", JCudaDriver.cuMemAllocHost(p, bytes));
        ByteBuffer buffer = p.getByteBuffer(0, bytes).order(ByteOrder.nativeOrder());
        pinned.put(buffer, p);
        return buffer;
    }

    @Override
    public void freePinned(ByteBuffer buffer) {
        Pointer p = pinned.remove(buffer);
        if (p == null) {
            throw new IllegalArgumentException("not a pinned buffer of this API (or freed twice)");
        }
        check("cuMemFreeHost", JCudaDriver.cuMemFreeHost(p));
    }

    @Override
    public Stream createStream() {
        CUstream s = new CUstream();
        check("cuStreamCreate", JCudaDriver.cuStreamCreate(s, CUstream_flags.CU_STREAM_NON_BLOCKING));
        return new JStream(s);
    }

    @Override
    public void destroyStream(Stream stream) {
        check("cuStreamDestroy", JCudaDriver.cuStreamDestroy(((JStream) stream).handle()));
    }

    @Override
    public void synchronize(Stream stream) {
        check("cuStreamSynchronize", JCudaDriver.cuStreamSynchronize(((JStream) stream).handle()));
    }

    @Override
    public Event createEvent() {
        CUevent e = new CUevent();
        check("cuEventCreate", JCudaDriver.cuEventCreate(e, CUevent_flags.CU_EVENT_DISABLE_TIMING));
        return new JEvent(e);
    }

    @Override
    public void destroyEvent(Event event) {
        check("cuEventDestroy", JCudaDriver.cuEventDestroy(((JEvent) event).handle()));
    }

    @Override
    public void record(Event event, Stream stream) {
        check("cuEventRecord", JCudaDriver.cuEventRecord(((JEvent) event).handle(), ((JStream) stream).handle()));
    }

    @Override
    public boolean isComplete(Event event) {
        int r = JCudaDriver.cuEventQuery(((JEvent) event).handle());
        if (r == CUresult.CUDA_ERROR_NOT_READY) {
            return false;
        }
        check("cuEventQuery", r);
        return true;
    }

    @Override
    public void synchronize(Event event) {
        check("cuEventSynchronize", JCudaDriver.cuEventSynchronize(((JEvent) event).handle()));
    }

    @Override
    public void wait(Stream stream, Event event) {
        check(
                "cuStreamWaitEvent",
                JCudaDriver.cuStreamWaitEvent(((JStream) stream).handle(), ((JEvent) event).handle(), 0));
    }

    private static Pointer host(ByteBuffer buffer, long bytes) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException(
                    "asynchronous copies need direct (ideally pinned) host buffers;" + " got a heap buffer");
        }
        if (buffer.remaining() < bytes) {
            throw new IllegalArgumentException("the host buffer has " + buffer.remaining() + " bytes from its position;"
                    + " the copy needs " + bytes);
        }
        return Pointer.to(buffer.slice());
    }

    @Override
    public void copyToDevice(long target, ByteBuffer source, long bytes, Stream stream) {
        check(
                "cuMemcpyHtoDAsync(" + bytes + ")",
                JCudaDriver.cuMemcpyHtoDAsync(at(target), host(source, bytes), bytes, ((JStream) stream).handle()));
    }

    @Override
    public void copyToHost(ByteBuffer target, long source, long bytes, Stream stream) {
        check(
                "cuMemcpyDtoHAsync(" + bytes + ")",
                JCudaDriver.cuMemcpyDtoHAsync(host(target, bytes), at(source), bytes, ((JStream) stream).handle()));
    }

    @Override
    public void copyPeer(long target, int targetDevice, long source, int sourceDevice, long bytes, Stream stream) {
        check(
                "cuMemcpyPeerAsync(" + bytes + ", cuda:" + sourceDevice + " -> cuda:" + targetDevice + ")",
                JCudaDriver.cuMemcpyPeerAsync(
                        at(target),
                        context(targetDevice),
                        at(source),
                        context(sourceDevice),
                        bytes,
                        ((JStream) stream).handle()));
    }

    @Override
    public boolean enablePeerAccess(int device, int peer) {
        int[] can = new int[1];
        check("cuDeviceCanAccessPeer", JCudaDriver.cuDeviceCanAccessPeer(can, device(device), device(peer)));
        if (can[0] == 0) {
            return false;
        }
        makeCurrent(device);
        int status = JCudaDriver.cuCtxEnablePeerAccess(context(peer), 0);
        if (status == jcuda.driver.CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
            return true;
        }
        check("cuCtxEnablePeerAccess(cuda:" + device + " -> cuda:" + peer + ")", status);
        return true;
    }

    @Override
    public void copyOnDevice(long target, long source, long bytes, Stream stream) {
        check(
                "cuMemcpyDtoDAsync(" + bytes + ")",
                JCudaDriver.cuMemcpyDtoDAsync(at(target), at(source), bytes, ((JStream) stream).handle()));
    }

    @Override
    public void fill(long target, byte value, long bytes, Stream stream) {
        check(
                "cuMemsetD8Async(" + bytes + ")",
                JCudaDriver.cuMemsetD8Async(at(target), value, bytes, ((JStream) stream).handle()));
    }

    @Override
    public Module loadModule(String ptx) {
        CUmodule m = new CUmodule();
        check("cuModuleLoadData", JCudaDriver.cuModuleLoadData(m, ptx));
        return new JModule(m);
    }

    @Override
    public void unloadModule(Module module) {
        check("cuModuleUnload", JCudaDriver.cuModuleUnload(((JModule) module).handle()));
    }

    @Override
    public Function function(Module module, String name) {
        CUfunction f = new CUfunction();
        check(
                "cuModuleGetFunction(" + name + ")",
                JCudaDriver.cuModuleGetFunction(f, ((JModule) module).handle(), name));
        return new JFunction(f, name);
    }

    @Override
    public void whenDone(Stream stream, Runnable callback) {
        check(
                "cuLaunchHostFunc",
                JCudaDriver.cuLaunchHostFunc(((JStream) stream).handle(), data -> callback.run(), null));
    }

    @Override
    public void launch(
            Function function, Dim3 grid, Dim3 block, int sharedBytes, Stream stream, KernelArguments arguments) {
        List<KernelArguments.Argument> args = arguments.arguments();
        Pointer[] params = new Pointer[args.size()];
        for (int i = 0; i < params.length; i++) {
            KernelArguments.Argument a = args.get(i);
            params[i] = switch (a.kind()) {
                case POINTER -> Pointer.to(at(a.value().longValue()));
                case I32 -> Pointer.to(new int[] {a.value().intValue()});
                case I64 -> Pointer.to(new long[] {a.value().longValue()});
                case F32 -> Pointer.to(new float[] {a.value().floatValue()});
                case F64 -> Pointer.to(new double[] {a.value().doubleValue()});
            };
        }
        JFunction f = (JFunction) function;
        check(
                "cuLaunchKernel(" + f.name() + ")",
                JCudaDriver.cuLaunchKernel(
                        f.handle(),
                        grid.x(),
                        grid.y(),
                        grid.z(),
                        block.x(),
                        block.y(),
                        block.z(),
                        sharedBytes,
                        ((JStream) stream).handle(),
                        Pointer.to(params),
                        null));
    }
}
