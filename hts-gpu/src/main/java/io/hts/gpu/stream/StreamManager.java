package io.hts.gpu.stream;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.EventPool;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The streams of one GPU: a fixed pool of non-blocking CUDA streams ({@code CU_STREAM_NON_BLOCKING},
 * so they never serialize with the legacy default stream), leased one per running GPU task, and
 * the events that order work across them on the device.
 *
 * <p>A task keeps its lease until its device work has completed (not merely been enqueued), so a
 * task that timed out on the host still holds its stream while a kernel runs. Leases go to the
 * lowest free lane, which keeps few streams warm under light load. Thread-safe.
 */
public final class StreamManager implements AutoCloseable {

    private final CudaApi api;
    private final int device;
    private final List<StreamLease> leases;
    private final BitSet free;
    private final EventPool events;
    /** Carries completion callbacks, each after its task's event, so that no task's stream waits for one. */
    private final CudaApi.Stream callbacks;

    private boolean closed;

    /**
     * Creates the streams on the device (its context is made current on the calling thread).
     *
     * @param api the CUDA API
     * @param device the device ordinal
     * @param streams how many, at least 1
     */
    public StreamManager(CudaApi api, int device, int streams) {
        if (streams < 1) {
            throw new IllegalArgumentException("hts.gpu.streams-per-device must be at least 1, was " + streams);
        }
        this.api = api;
        this.device = device;
        api.makeCurrent(device);
        List<StreamLease> created = new ArrayList<>(streams);
        for (int i = 0; i < streams; i++) {
            created.add(new StreamLease(i, api.createStream()));
        }
        this.leases = List.copyOf(created);
        this.free = new BitSet(streams);
        free.set(0, streams);
        this.events = new EventPool(api);
        this.callbacks = api.createStream();
    }

    /** The device ordinal. */
    public int device() {
        return device;
    }

    /** How many streams there are. */
    public int size() {
        return leases.size();
    }

    /** How many are leased now. */
    public synchronized int inUse() {
        return leases.size() - free.cardinality();
    }

    /** Leases the lowest free stream, or returns {@code null} when all are in use. */
    public synchronized @Nullable StreamLease tryAcquire() {
        int lane = free.nextSetBit(0);
        if (lane < 0 || closed) {
            return null;
        }
        free.clear(lane);
        return leases.get(lane);
    }

    /**
     * Returns a lease.
     *
     * @param lease a lease of this manager, held
     */
    public synchronized void release(StreamLease lease) {
        if (leases.get(lease.lane()) != lease || free.get(lease.lane())) {
            throw new IllegalStateException("stream lane " + lease.lane() + " of cuda:" + device + " is not leased");
        }
        free.set(lease.lane());
    }

    /**
     * Runs {@code callback} on CUDA's callback thread once the work {@code done} was recorded after
     * has completed. The callback goes on a stream of its own that waits for the event on the
     * device, not on the task's stream: a host function blocks its stream until it has returned
     * (hundreds of microseconds for a call into the JVM), and the next task on that stream, often
     * launched as soon as this one was seen complete, would wait behind it.
     *
     * @param done an event recorded after the work (re-recording it later does not move this wait)
     * @param callback what to run; must be short and must not call CUDA
     */
    public void whenDone(CudaApi.Event done, Runnable callback) {
        api.wait(callbacks, done);
        api.whenDone(callbacks, callback);
    }

    /** The events used to track completion and order work across streams. */
    public EventPool events() {
        return events;
    }

    /**
     * Makes later work on {@code waiter} wait, on the device, for the work enqueued on {@code producer}
     * so far: an event recorded on one and waited on by the other; the host does not block.
     *
     * @param waiter the stream that waits
     * @param producer the stream waited for
     * @return the event (recycled by the caller once nothing refers to it)
     */
    public CudaApi.Event order(CudaApi.Stream waiter, CudaApi.Stream producer) {
        CudaApi.Event e = events.obtain();
        api.record(e, producer);
        api.wait(waiter, e);
        return e;
    }

    /** Waits for every stream's work, then destroys the streams and the idle events. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        api.makeCurrent(device);
        List<CudaApi.Stream> all = new ArrayList<>();
        leases.forEach(l -> all.add(l.stream()));
        all.add(callbacks);
        for (CudaApi.Stream stream : all) {
            try {
                api.synchronize(stream);
                api.destroyStream(stream);
            } catch (CudaException ignored) {
                // a poisoned context fails every call; its streams go with it
            }
        }
        events.close();
    }
}
