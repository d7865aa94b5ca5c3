package io.hts.gpu.support;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.memory.PoolSettings;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * A test-only CUDA device in plain Java: device memory is host memory, streams are FIFO queues of
 * operations, events complete when the work before them on their stream has run, and kernels are
 * Java functions registered by name (the built-in ones are). Work runs when the test says so
 * ({@link #runAll()}, {@link #runStream}) or, in {@linkplain #autoRun(boolean) auto mode}, as
 * soon as it is enqueued. Errors are injected per call name, or at a kernel's completion (as a
 * real illegal address surfaces at {@code cuEventQuery}). A sticky error poisons the simulated
 * context: every later call fails with it. Modules are counted as they are loaded and unloaded;
 * looking up or launching a function of an unloaded module fails with
 * {@code CUDA_ERROR_INVALID_HANDLE}, so that tests see a kernel used after its module was unloaded.
 * Never part of the product.
 */
public final class SimulatedCuda implements CudaApi {

    private static final String[] STICKY_NAMES = {"CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED"};

    private final long memoryBytes;
    private final TreeMap<Long, ByteBuffer> allocations = new TreeMap<>();
    private final Map<Long, Long> sizes = new HashMap<>();
    private final Map<String, Consumer<Launch>> kernels = new HashMap<>();
    private final Map<String, Map<String, Consumer<Launch>>> moduleKernels = new HashMap<>();
    private final Map<String, Integer> failNext = new HashMap<>();
    private final Map<String, Integer> failKernelAtCompletion = new HashMap<>();
    private final List<SimStream> streams = new ArrayList<>();
    private long nextAddress = 1L << 32;
    private long allocatedBytes;
    private boolean autoRun = true;
    private int devices = 1;
    private int poisonedCode;
    private String poisonedName = "";
    private int calls;
    private final Map<String, Integer> callsByName = new HashMap<>();
    private int pinnedLive;
    private int peerCopies;
    /** The device whose context is current on each thread (0 until made current), as the driver keeps it. */
    private final ThreadLocal<int[]> current = ThreadLocal.withInitial(() -> new int[1]);

    private int modulesLoaded;
    /** Kernels launched whose work has not run yet. */
    private int pendingKernels;

    private int modulesUnloaded;

    /** A kernel launch as a simulated kernel sees it ({@code module}: the text of the kernel's module). */
    public record Launch(
            SimulatedCuda device, String module, Dim3 grid, Dim3 block, List<KernelArguments.Argument> arguments) {

        public long i64(int i) {
            return arguments.get(i).value().longValue();
        }

        public float f32(int i) {
            return arguments.get(i).value().floatValue();
        }

        public ByteBuffer memory(int i) {
            return device.memoryAt(arguments.get(i).value().longValue());
        }
    }

    private final class SimStream implements Stream {
        final ArrayDeque<Runnable> work = new ArrayDeque<>();
        final int device;
        long enqueued;
        long done;

        SimStream(int device) {
            this.device = device;
        }
    }

    /** An event of the context ({@code device}) current when it was created. */
    private record SimEvent(int id, int device, long[] target) implements Event {}

    private static final class SimModule implements Module {
        final String ptx;
        boolean unloaded;

        SimModule(String ptx) {
            this.ptx = ptx;
        }
    }

    private record SimFunction(String name, SimModule module) implements Function {}

    public SimulatedCuda(long memoryBytes) {
        this.memoryBytes = memoryBytes;
        kernel("hts_axpy_f32", l -> {
            long n = l.i64(0);
            float a = l.f32(1);
            ByteBuffer x = l.memory(2);
            ByteBuffer y = l.memory(3);
            for (int i = 0; i < n; i++) {
                y.putFloat(4 * i, a * x.getFloat(4 * i) + y.getFloat(4 * i));
            }
        });
        kernel("hts_scale_f32", l -> {
            ByteBuffer x = l.memory(2);
            for (int i = 0; i < l.i64(0); i++) {
                x.putFloat(4 * i, l.f32(1) * x.getFloat(4 * i));
            }
        });
        kernel("hts_fill_f32", l -> {
            ByteBuffer x = l.memory(2);
            for (int i = 0; i < l.i64(0); i++) {
                x.putFloat(4 * i, l.f32(1));
            }
        });
        kernel("hts_sum_f32", l -> {
            ByteBuffer x = l.memory(1);
            float sum = 0;
            for (int i = 0; i < l.i64(0); i++) {
                sum += x.getFloat(4 * i);
            }
            ByteBuffer out = l.memory(2);
            out.putFloat(0, out.getFloat(0) + sum);
        });
    }

    // ------------------------------------------------------------------ backends on it

    /** The settings backend tests use: {@code streams} streams, a pool of 4 MiB arenas up to 64 MiB. */
    public static GpuSettings testSettings(int streams) {
        return GpuSettings.defaults(64L << 20)
                .withStreams(streams)
                .withMemory(new PoolSettings(4L << 20, 64L << 20, 4L << 20, 256));
    }

    /**
     * {@link #testSettings} whose launcher parks as soon as it is idle (no poll spin), as one does
     * between a service's requests: callers that wait for their runs find it free and launch
     * their tasks' work themselves.
     */
    public static GpuSettings parkingSettings(int streams) {
        return testSettings(streams).withPollSpin(Duration.ZERO);
    }

    /** A GPU backend on simulated device 0 with {@link #testSettings}, without cuBLAS. */
    public GpuBackend backend(int streams) {
        return backend(testSettings(streams));
    }

    /** A GPU backend on simulated device 0 with {@code settings}, without cuBLAS. */
    public GpuBackend backend(GpuSettings settings) {
        return backend(0, settings);
    }

    /** A GPU backend on simulated device {@code ordinal} with {@code settings}, without cuBLAS. */
    public GpuBackend backend(int ordinal, GpuSettings settings) {
        return new GpuBackend(this, deviceInfo(ordinal), settings, false);
    }

    /**
     * A GPU backend on simulated device 0 with {@link #testSettings} that reaches this simulation
     * through {@code api}, a wrapper of it that changes what the backend sees (injected faults,
     * gates, the order in which completions are found), without cuBLAS.
     */
    public GpuBackend backendThrough(CudaApi api, int streams) {
        return new GpuBackend(api, deviceInfo(0), testSettings(streams), false);
    }

    /** One GPU backend on every simulated device, each with {@code settings}, as the backend of a multi-GPU host. */
    public MultiGpuBackend backends(GpuSettings settings) {
        List<GpuBackend> each = new ArrayList<>();
        for (int ordinal = 0; ordinal < deviceCount(); ordinal++) {
            each.add(backend(ordinal, settings));
        }
        return new MultiGpuBackend(each, this);
    }

    // ------------------------------------------------------------------ test controls

    /** Registers a simulated kernel. */
    public synchronized SimulatedCuda kernel(String name, Consumer<Launch> body) {
        kernels.put(name, body);
        return this;
    }

    /**
     * Registers a simulated kernel of one module only: a kernel of that name in a module of exactly
     * this text runs {@code body}, other modules' run the kernel registered by {@link #kernel}.
     */
    public synchronized SimulatedCuda kernel(String moduleText, String name, Consumer<Launch> body) {
        moduleKernels.computeIfAbsent(moduleText, t -> new HashMap<>()).put(name, body);
        return this;
    }

    /** Modules loaded ({@code cuModuleLoadData}) so far. */
    public synchronized int modulesLoaded() {
        return modulesLoaded;
    }

    /** Modules unloaded ({@code cuModuleUnload}) so far. */
    public synchronized int modulesUnloaded() {
        return modulesUnloaded;
    }

    /** In auto mode (the default) work runs as soon as it is enqueued; otherwise when the test runs it. */
    public synchronized void autoRun(boolean auto) {
        this.autoRun = auto;
        if (auto) {
            runAll();
        }
    }

    /** Runs every stream's queued work. */
    public synchronized void runAll() {
        for (SimStream s : streams) {
            drain(s);
        }
    }

    /** How many times the driver call {@code call} (e.g. "cuLaunchHostFunc") was made. */
    public synchronized int callsOf(String call) {
        return callsByName.getOrDefault(call, 0);
    }

    /** Kernels launched and not run yet. */
    public synchronized int queuedKernels() {
        return pendingKernels;
    }

    /** Work enqueued on any stream and not run yet: kernels, copies, event waits, host functions. */
    public synchronized int queuedWork() {
        int n = 0;
        for (SimStream s : streams) {
            n += s.work.size();
        }
        return n;
    }

    /** The next call named {@code call} (e.g. "cuMemAlloc", "cuLaunchKernel") fails with {@code code}. */
    public synchronized void failNext(String call, int code) {
        failNext.put(call, code);
    }

    /** The kernel's next launch fails when its work runs, sticky, surfacing at the next event query. */
    public synchronized void failKernelAtCompletion(String kernel, int code) {
        failKernelAtCompletion.put(kernel, code);
    }

    /** How many devices the simulated driver reports (1 unless set). */
    public synchronized SimulatedCuda withDevices(int count) {
        this.devices = count;
        return this;
    }

    /** Device bytes allocated through cuMemAlloc and not freed. */
    public synchronized long allocatedBytes() {
        return allocatedBytes;
    }

    /** Pinned host buffers not freed. */
    public synchronized int pinnedBuffers() {
        return pinnedLive;
    }

    /** The memory at a device address, from that address on (a view; little-endian floats). */
    public synchronized ByteBuffer memoryAt(long address) {
        Map.Entry<Long, ByteBuffer> e = allocations.floorEntry(address);
        if (e == null || address - e.getKey() >= e.getValue().capacity()) {
            throw new IllegalStateException("simulated illegal address 0x" + Long.toHexString(address));
        }
        return e.getValue()
                .duplicate()
                .position((int) (address - e.getKey()))
                .slice()
                .order(ByteOrder.nativeOrder());
    }

    // ------------------------------------------------------------------ plumbing

    private void enter(String call) {
        calls++;
        callsByName.merge(call, 1, Integer::sum);
        if (poisonedCode != 0) {
            throw new CudaException(call, poisonedCode, poisonedName);
        }
        Integer code = failNext.remove(call);
        if (code != null) {
            throw new CudaException(call, code, nameOf(code));
        }
    }

    private static String nameOf(int code) {
        return switch (code) {
            case 2 -> "CUDA_ERROR_OUT_OF_MEMORY";
            case 100 -> "CUDA_ERROR_NO_DEVICE";
            case 400 -> "CUDA_ERROR_INVALID_HANDLE";
            case 700 -> STICKY_NAMES[0];
            case 719 -> STICKY_NAMES[1];
            case 999 -> "CUDA_ERROR_UNKNOWN";
            default -> "CUDA_ERROR_" + code;
        };
    }

    private void enqueue(Stream stream, Runnable op) {
        SimStream s = (SimStream) stream;
        s.work.add(op);
        s.enqueued++;
        if (autoRun) {
            drain(s);
        }
    }

    private void drain(SimStream s) {
        Runnable op;
        while (poisonedCode == 0 && (op = s.work.poll()) != null) {
            op.run();
            s.done++;
        }
    }

    // ------------------------------------------------------------------ CudaApi

    @Override
    public synchronized int deviceCount() {
        return devices;
    }

    @Override
    public synchronized DeviceInfo deviceInfo(int ordinal) {
        Integer code = failNext.remove("cuDeviceGetName"); // a query that fails, as discovery sees it
        if (code != null) {
            throw new CudaException("cuDeviceGetName", code, nameOf(code));
        }
        return new DeviceInfo(ordinal, "Simulated GPU", memoryBytes, 9, 0, 4);
    }

    @Override
    public int driverVersion() {
        return 13000;
    }

    @Override
    public void makeCurrent(int ordinal) {
        current.get()[0] = ordinal;
    }

    @Override
    public Object borrow(int ordinal) {
        int before = currentDevice();
        makeCurrent(ordinal);
        return before;
    }

    @Override
    public void giveBack(Object previous) {
        makeCurrent((Integer) previous);
    }

    /** The device whose context is current on the calling thread. */
    public int currentDevice() {
        return current.get()[0];
    }

    @Override
    public synchronized long[] memoryInfo() {
        return new long[] {memoryBytes - allocatedBytes, memoryBytes};
    }

    @Override
    public synchronized long allocate(long bytes) {
        enter("cuMemAlloc");
        if (allocatedBytes + bytes > memoryBytes) {
            throw new CudaException("cuMemAlloc(" + bytes + ")", 2, nameOf(2));
        }
        long address = nextAddress;
        nextAddress += (bytes + 4095) & ~4095L;
        // memory beyond the first 64 MiB of an allocation is accounted for but not backed
        allocations.put(
                address, ByteBuffer.allocate((int) Math.min(bytes, 64L << 20)).order(ByteOrder.nativeOrder()));
        sizes.put(address, bytes);
        allocatedBytes += bytes;
        return address;
    }

    @Override
    public synchronized void free(long address) {
        enter("cuMemFree");
        ByteBuffer b = allocations.remove(address);
        if (b == null) {
            throw new CudaException("cuMemFree", 1, "CUDA_ERROR_INVALID_VALUE");
        }
        allocatedBytes -= sizes.remove(address);
    }

    @Override
    public synchronized ByteBuffer allocatePinned(long bytes) {
        enter("cuMemAllocHost");
        pinnedLive++;
        return ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
    }

    @Override
    public synchronized void freePinned(ByteBuffer buffer) {
        pinnedLive--;
    }

    @Override
    public synchronized Stream createStream() {
        enter("cuStreamCreate");
        SimStream s = new SimStream(currentDevice());
        streams.add(s);
        return s;
    }

    @Override
    public synchronized void destroyStream(Stream stream) {
        enter("cuStreamDestroy");
        drain((SimStream) stream); // destroying a stream lets its work finish; its index stays taken
    }

    @Override
    public synchronized void synchronize(Stream stream) {
        enter("cuStreamSynchronize");
        drain((SimStream) stream);
    }

    @Override
    public synchronized Event createEvent() {
        enter("cuEventCreate");
        return new SimEvent(calls, currentDevice(), new long[] {0, -1});
    }

    @Override
    public void destroyEvent(Event event) {}

    @Override
    public synchronized void record(Event event, Stream stream) {
        enter("cuEventRecord");
        SimStream s = (SimStream) stream;
        SimEvent ev = (SimEvent) event;
        if (ev.device() != s.device) {
            // the driver refuses an event of another context than the stream's
            throw new CudaException("cuEventRecord", 400, "CUDA_ERROR_INVALID_HANDLE");
        }
        long[] t = ((SimEvent) event).target();
        t[0] = s.enqueued;
        t[1] = streams.indexOf(s);
    }

    @Override
    public synchronized boolean isComplete(Event event) {
        enter("cuEventQuery");
        long[] t = ((SimEvent) event).target();
        if (t[1] < 0) {
            return true;
        }
        return streams.get((int) t[1]).done >= t[0];
    }

    @Override
    public synchronized void synchronize(Event event) {
        enter("cuEventSynchronize");
        long[] t = ((SimEvent) event).target();
        if (t[1] >= 0) {
            drain(streams.get((int) t[1]));
        }
    }

    @Override
    public synchronized void wait(Stream stream, Event event) {
        enter("cuStreamWaitEvent");
        long[] t = ((SimEvent) event).target();
        if (t[1] >= 0) {
            SimStream producer = streams.get((int) t[1]);
            long target = t[0];
            enqueue(stream, () -> {
                while (producer.done < target && producer.work.peek() != null) {
                    producer.work.poll().run();
                    producer.done++;
                }
            });
        }
    }

    @Override
    public synchronized void copyToDevice(long target, ByteBuffer source, long bytes, Stream stream) {
        enter("cuMemcpyHtoDAsync");
        ByteBuffer from = source.duplicate();
        enqueue(stream, () -> memoryAt(target).put(from.limit(from.position() + (int) bytes)));
    }

    @Override
    public synchronized void copyToHost(ByteBuffer target, long source, long bytes, Stream stream) {
        enter("cuMemcpyDtoHAsync");
        ByteBuffer to = target.duplicate();
        enqueue(stream, () -> to.put(memoryAt(source).limit((int) bytes)));
    }

    @Override
    public synchronized void copyOnDevice(long target, long source, long bytes, Stream stream) {
        enter("cuMemcpyDtoDAsync");
        enqueue(stream, () -> memoryAt(target).put(memoryAt(source).limit((int) bytes)));
    }

    /** One address space for all simulated devices (as CUDA's unified addressing): a peer copy is a device copy. */
    @Override
    public synchronized void copyPeer(
            long target, int targetDevice, long source, int sourceDevice, long bytes, Stream stream) {
        enter("cuMemcpyPeerAsync");
        peerCopies++;
        enqueue(stream, () -> memoryAt(target).put(memoryAt(source).limit((int) bytes)));
    }

    @Override
    public synchronized boolean enablePeerAccess(int device, int peer) {
        enter("cuCtxEnablePeerAccess");
        return true;
    }

    /** How many peer copies were enqueued. */
    public synchronized int peerCopies() {
        return peerCopies;
    }

    @Override
    public synchronized void fill(long target, byte value, long bytes, Stream stream) {
        enter("cuMemsetD8Async");
        enqueue(stream, () -> {
            ByteBuffer m = memoryAt(target);
            for (int i = 0; i < bytes; i++) {
                m.put(i, value);
            }
        });
    }

    @Override
    public synchronized Module loadModule(String ptx) {
        enter("cuModuleLoadData");
        modulesLoaded++;
        return new SimModule(ptx);
    }

    @Override
    public synchronized void unloadModule(Module module) {
        enter("cuModuleUnload");
        SimModule m = (SimModule) module;
        requireLoaded("cuModuleUnload", m);
        m.unloaded = true;
        modulesUnloaded++;
    }

    private static void requireLoaded(String call, SimModule module) {
        if (module.unloaded) {
            throw new CudaException(call, 400, nameOf(400));
        }
    }

    @Override
    public synchronized Function function(Module module, String name) {
        enter("cuModuleGetFunction");
        SimModule m = (SimModule) module;
        requireLoaded("cuModuleGetFunction(" + name + ")", m);
        if (body(m, name) == null || !m.ptx.contains(name)) {
            throw new CudaException("cuModuleGetFunction(" + name + ")", 500, "CUDA_ERROR_NOT_FOUND");
        }
        return new SimFunction(name, m);
    }

    private Consumer<Launch> body(SimModule module, String name) {
        Consumer<Launch> own = moduleKernels.getOrDefault(module.ptx, Map.of()).get(name);
        return own != null ? own : kernels.get(name);
    }

    @Override
    public synchronized void whenDone(Stream stream, Runnable callback) {
        enter("cuLaunchHostFunc");
        enqueue(stream, callback);
    }

    @Override
    public synchronized void launch(
            Function function, Dim3 grid, Dim3 block, int sharedBytes, Stream stream, KernelArguments arguments) {
        SimFunction f = (SimFunction) function;
        String name = f.name();
        enter("cuLaunchKernel");
        requireLoaded("cuLaunchKernel(" + name + ")", f.module());
        Consumer<Launch> body = body(f.module(), name);
        Launch launch = new Launch(this, f.module().ptx, grid, block, List.copyOf(arguments.arguments()));
        Integer failure = failKernelAtCompletion.remove(name);
        pendingKernels++;
        enqueue(stream, () -> {
            pendingKernels--; // run by drain, under this object's lock
            if (failure != null) {
                poisonedCode = failure;
                poisonedName = nameOf(failure);
                return;
            }
            body.accept(launch);
        });
    }
}
