package io.hts.gpu.cuda;

import java.util.ArrayDeque;

/**
 * Reuses CUDA events (created without timing): creating and destroying one per task or per
 * stream-ordered free would cost microseconds each. Thread-safe.
 */
public final class EventPool implements AutoCloseable {

    private final CudaApi api;
    private final ArrayDeque<CudaApi.Event> idle = new ArrayDeque<>();
    private int created;

    /**
     * Creates an empty pool.
     *
     * @param api the API that creates the events (on the caller's current context)
     */
    public EventPool(CudaApi api) {
        this.api = api;
    }

    /** An event not in use: a reused one, or a new one. */
    public CudaApi.Event obtain() {
        synchronized (idle) {
            CudaApi.Event e = idle.poll();
            if (e != null) {
                return e;
            }
            created++;
        }
        return api.createEvent();
    }

    /**
     * Gives an event back once nobody waits on it.
     *
     * @param event the event
     */
    public void recycle(CudaApi.Event event) {
        synchronized (idle) {
            idle.push(event);
        }
    }

    /** How many events this pool has created. */
    public int created() {
        synchronized (idle) {
            return created;
        }
    }

    /** Destroys the idle events (events still in use are the user's). */
    @Override
    public void close() {
        synchronized (idle) {
            for (CudaApi.Event e : idle) {
                try {
                    api.destroyEvent(e);
                } catch (CudaException ignored) {
                    // a poisoned context cannot destroy its events; the driver reclaims them with it
                }
            }
            idle.clear();
        }
    }
}
