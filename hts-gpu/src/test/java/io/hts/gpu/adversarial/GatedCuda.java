package io.hts.gpu.adversarial;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.support.SimulatedCuda;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A SimulatedCuda with one more control: a stream that launches the "gate" kernel is held from
 * that launch on (the launch and everything enqueued on it after, events recorded on it included)
 * until {@link #open()}. Every other stream's work runs as SimulatedCuda runs it (auto mode). So a
 * test can let one task's device work complete while another task's device work is still pending,
 * as on a real GPU where a follower's kernels run after its predecessor's event.
 */
final class GatedCuda implements CudaApi {

    static final String GATE = "hts_test_gate";
    static final String GATE_MODULE = "// module with " + GATE;

    final SimulatedCuda sim;
    private final Map<Function, String> names = new IdentityHashMap<>();
    private final Map<Stream, List<Runnable>> held = new IdentityHashMap<>();
    private final Set<Event> deferred = Collections.newSetFromMap(new IdentityHashMap<>());

    GatedCuda(SimulatedCuda sim) {
        this.sim = sim;
    }

    synchronized boolean holding() {
        return !held.isEmpty();
    }

    /** Lets the held streams' work run, in the order it was enqueued. */
    synchronized void open() {
        List<Map.Entry<Stream, List<Runnable>>> all = new ArrayList<>(held.entrySet());
        held.clear();
        for (Map.Entry<Stream, List<Runnable>> e : all) {
            for (Runnable r : e.getValue()) {
                r.run();
            }
        }
        deferred.clear();
    }

    private boolean defer(Stream s, Runnable op) {
        List<Runnable> l = held.get(s);
        if (l == null) {
            return false;
        }
        l.add(op);
        return true;
    }

    @Override
    public synchronized int deviceCount() {
        return sim.deviceCount();
    }

    @Override
    public synchronized DeviceInfo deviceInfo(int ordinal) {
        return sim.deviceInfo(ordinal);
    }

    @Override
    public int driverVersion() {
        return sim.driverVersion();
    }

    @Override
    public void makeCurrent(int ordinal) {
        sim.makeCurrent(ordinal);
    }

    @Override
    public Object borrow(int ordinal) {
        return sim.borrow(ordinal);
    }

    @Override
    public void giveBack(Object previous) {
        sim.giveBack(previous);
    }

    @Override
    public synchronized long[] memoryInfo() {
        return sim.memoryInfo();
    }

    @Override
    public synchronized long allocate(long bytes) {
        return sim.allocate(bytes);
    }

    @Override
    public synchronized void free(long address) {
        sim.free(address);
    }

    @Override
    public synchronized ByteBuffer allocatePinned(long bytes) {
        return sim.allocatePinned(bytes);
    }

    @Override
    public synchronized void freePinned(ByteBuffer buffer) {
        sim.freePinned(buffer);
    }

    @Override
    public synchronized Stream createStream() {
        return sim.createStream();
    }

    @Override
    public synchronized void destroyStream(Stream stream) {
        sim.destroyStream(stream);
    }

    @Override
    public synchronized void synchronize(Stream stream) {
        if (held.containsKey(stream)) {
            throw new IllegalStateException("test: synchronize on a held stream would block");
        }
        sim.synchronize(stream);
    }

    @Override
    public synchronized Event createEvent() {
        return sim.createEvent();
    }

    @Override
    public void destroyEvent(Event event) {
        sim.destroyEvent(event);
    }

    @Override
    public synchronized void record(Event event, Stream stream) {
        if (held.containsKey(stream)) {
            deferred.add(event);
            held.get(stream).add(() -> {
                sim.record(event, stream);
                deferred.remove(event);
            });
            return;
        }
        sim.record(event, stream);
    }

    @Override
    public synchronized boolean isComplete(Event event) {
        if (deferred.contains(event)) {
            return false;
        }
        return sim.isComplete(event);
    }

    @Override
    public synchronized void synchronize(Event event) {
        if (deferred.contains(event)) {
            throw new IllegalStateException("test: synchronize on a held event would block");
        }
        sim.synchronize(event);
    }

    @Override
    public synchronized void wait(Stream stream, Event event) {
        if (deferred.contains(event)) {
            held.computeIfAbsent(stream, s -> new ArrayList<>());
        }
        if (!defer(stream, () -> sim.wait(stream, event))) {
            sim.wait(stream, event);
        }
    }

    @Override
    public synchronized void copyToDevice(long target, ByteBuffer source, long bytes, Stream stream) {
        if (!defer(stream, () -> sim.copyToDevice(target, source, bytes, stream))) {
            sim.copyToDevice(target, source, bytes, stream);
        }
    }

    @Override
    public synchronized void copyToHost(ByteBuffer target, long source, long bytes, Stream stream) {
        if (!defer(stream, () -> sim.copyToHost(target, source, bytes, stream))) {
            sim.copyToHost(target, source, bytes, stream);
        }
    }

    @Override
    public synchronized void copyOnDevice(long target, long source, long bytes, Stream stream) {
        if (!defer(stream, () -> sim.copyOnDevice(target, source, bytes, stream))) {
            sim.copyOnDevice(target, source, bytes, stream);
        }
    }

    @Override
    public synchronized void copyPeer(
            long target, int targetDevice, long source, int sourceDevice, long bytes, Stream stream) {
        if (!defer(stream, () -> sim.copyPeer(target, targetDevice, source, sourceDevice, bytes, stream))) {
            sim.copyPeer(target, targetDevice, source, sourceDevice, bytes, stream);
        }
    }

    @Override
    public synchronized boolean enablePeerAccess(int device, int peer) {
        return sim.enablePeerAccess(device, peer);
    }

    @Override
    public synchronized void fill(long target, byte value, long bytes, Stream stream) {
        if (!defer(stream, () -> sim.fill(target, value, bytes, stream))) {
            sim.fill(target, value, bytes, stream);
        }
    }

    @Override
    public synchronized Module loadModule(String ptx) {
        return sim.loadModule(ptx);
    }

    @Override
    public synchronized void unloadModule(Module module) {
        sim.unloadModule(module);
    }

    @Override
    public synchronized Function function(Module module, String name) {
        Function f = sim.function(module, name);
        names.put(f, name);
        return f;
    }

    @Override
    public synchronized void whenDone(Stream stream, Runnable callback) {
        if (!defer(stream, () -> sim.whenDone(stream, callback))) {
            sim.whenDone(stream, callback);
        }
    }

    @Override
    public synchronized void launch(
            Function function, Dim3 grid, Dim3 block, int sharedBytes, Stream stream, KernelArguments arguments) {
        if (GATE.equals(names.get(function))) {
            held.computeIfAbsent(stream, s -> new ArrayList<>());
        }
        if (!defer(stream, () -> sim.launch(function, grid, block, sharedBytes, stream, arguments))) {
            sim.launch(function, grid, block, sharedBytes, stream, arguments);
        }
    }
}
