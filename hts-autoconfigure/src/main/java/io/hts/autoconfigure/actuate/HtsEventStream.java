package io.hts.autoconfigure.actuate;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import io.hts.engine.observe.EventBus;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The live event stream's subscriptions: each subscriber is a {@link TaskListener} on the
 * scheduler's event bus with a bounded queue; the thread that publishes an event (a worker) only
 * offers it to the queue, and one sender thread ({@code hts-sse}) writes to the connections, so a
 * slow client never slows the scheduler. A subscriber whose queue is full loses events; the next
 * event it gets says how many in a {@code dropped} comment. Closed with the context.
 */
public final class HtsEventStream implements DisposableBean {

    /** Events a subscriber may have waiting before it loses some. */
    static final int QUEUE = 4096;

    private final EventBus bus;
    private final Duration timeout;
    private final ExecutorService sender = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "hts-sse");
        t.setDaemon(true);
        return t;
    });

    /**
     * Creates the stream.
     *
     * @param bus the scheduler's event bus
     * @param timeout how long a connection stays open
     */
    public HtsEventStream(EventBus bus, Duration timeout) {
        this.bus = bus;
        this.timeout = timeout;
    }

    /**
     * Subscribes a new connection.
     *
     * @param filter which events it gets
     * @param routine whether it also gets the routine events (ready, started, succeeded)
     * @return the emitter the controller returns
     * @throws IOException when the first message cannot be written
     */
    public SseEmitter subscribe(Predicate<TaskEvent> filter, boolean routine) throws IOException {
        SseEmitter emitter = new SseEmitter(timeout.toMillis());
        Subscriber s = new Subscriber(emitter, filter, routine);
        emitter.onCompletion(() -> bus.removeListener(s));
        emitter.onTimeout(() -> bus.removeListener(s));
        emitter.onError(ex -> bus.removeListener(s));
        bus.addListener(s);
        emitter.send(SseEmitter.event().comment("subscribed"));
        return emitter;
    }

    @Override
    public void destroy() {
        sender.shutdownNow();
    }

    private final class Subscriber implements TaskListener {

        private final SseEmitter emitter;
        private final Predicate<TaskEvent> filter;
        private final boolean routine;
        private final ArrayBlockingQueue<TaskEvent> queue = new ArrayBlockingQueue<>(QUEUE);
        private final AtomicBoolean flushing = new AtomicBoolean();
        private final AtomicLong dropped = new AtomicLong();
        private volatile boolean closed;

        Subscriber(SseEmitter emitter, Predicate<TaskEvent> filter, boolean routine) {
            this.emitter = emitter;
            this.filter = filter;
            this.routine = routine;
        }

        @Override
        public boolean wantsRoutineEvents() {
            return routine;
        }

        @Override
        public void onEvent(TaskEvent event) {
            if (closed || !filter.test(event)) {
                return;
            }
            if (!queue.offer(event)) {
                dropped.incrementAndGet();
            }
            if (flushing.compareAndSet(false, true)) {
                sender.execute(this::flush);
            }
        }

        /** On the sender thread: writes what is queued; goes round again if more came meanwhile. */
        private void flush() {
            do {
                try {
                    for (TaskEvent e; (e = queue.poll()) != null; ) {
                        long lost = dropped.getAndSet(0);
                        SseEmitter.SseEventBuilder message = SseEmitter.event().id(Long.toString(e.sequence()))
                                .name(e.type().name()).data(HtsEventsEndpoint.describe(e), MediaType.APPLICATION_JSON);
                        if (lost > 0) {
                            message.comment("dropped " + lost + " events (the client reads slower than they come)");
                        }
                        emitter.send(message);
                    }
                }
                catch (IOException | RuntimeException ex) {
                    closed = true; // the client went away (or the event could not be written): unsubscribe
                    queue.clear();
                    emitter.completeWithError(ex);
                    bus.removeListener(this);
                }
                flushing.set(false);
            }
            while (!closed && !queue.isEmpty() && flushing.compareAndSet(false, true));
        }
    }
}
