package io.hts.autoconfigure.actuate;

import io.hts.engine.observe.EventLog;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.run.Scheduler;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The live event stream's subscriptions: each subscriber is a {@link TaskListener} on the
 * scheduler's event bus with a bounded queue; the thread that publishes an event (a worker) only
 * offers it to the queue, and a sender thread writes it to the connection, one subscriber at a
 * time per thread, so a slow client never slows the scheduler nor the other clients. A subscriber
 * whose queue is full loses events; the next event it gets says how many in a {@code dropped}
 * comment.
 *
 * <p><b>Resuming.</b> A client that reconnects with {@code Last-Event-ID} (browsers' EventSource
 * do so by themselves) first gets the events after that
 * one that the recent-events buffer still holds and that its filter selects, then the live ones,
 * without duplicates. A first connection (no {@code Last-Event-ID}) is told at once, with its
 * {@code subscribed} comment, the id of the newest event the buffer holds (0 when none): a client
 * that loses the connection before any event reaches it still resumes from there, and gets what
 * happened while it was away. An event's id is {@code <instance>:<sequence>}: the instance is made
 * at random when this stream is created (once per application context), so a client that resumes
 * with an id of another instance (the application behind the address was restarted, and numbers
 * its events from 1 again) is given everything the buffer holds, and can tell the new application
 * by its ids. A bare sequence number is accepted too, as the instance's own.
 *
 * <p><b>Shutdown.</b> A lifecycle that stops before the web server's graceful shutdown: every open
 * stream is completed, so a SIGTERM is not held up by open connections for the whole grace period.
 * A connection whose time ran out is completed quietly.
 */
public final class HtsEventStream implements SmartLifecycle, org.springframework.beans.factory.DisposableBean {

    /** Events a subscriber may have waiting before it loses some. */
    static final int QUEUE = 4096;
    /** Events replayed to a resuming client at most. */
    static final int REPLAY = 10_000;
    /** Sender threads at most (each serves one connection at a time; idle ones end after a minute). */
    static final int SENDERS = 16;

    private final Scheduler scheduler;
    private final Duration timeout;
    /** See the class comment: random, so that two applications behind one address tell apart. */
    private final String instance =
            Long.toString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);

    private final Set<Subscriber> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger senderIds = new AtomicInteger();
    private final ExecutorService senders;
    private volatile boolean running;

    /**
     * Creates the stream.
     *
     * @param scheduler the scheduler whose events it streams
     * @param timeout how long a connection stays open
     */
    public HtsEventStream(Scheduler scheduler, Duration timeout) {
        this.scheduler = scheduler;
        this.timeout = timeout;
        // up to SENDERS threads, one a connection being written; more connections queue; idle threads end
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(SENDERS, SENDERS, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "hts-sse-" + senderIds.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        this.senders = pool;
    }

    /** This stream's instance, the first part of its event ids (see the class comment). */
    public String instance() {
        return instance;
    }

    /**
     * The sequence number a {@code Last-Event-ID} resumes after, as text: the id's own number when
     * it is this instance's (or a bare number), else {@code "0"} (an id of another instance: the
     * whole buffer); the caller checks that it is a number.
     *
     * @param lastEventId the id as the client sent it
     * @return the sequence part
     */
    public String sequenceOf(String lastEventId) {
        int colon = lastEventId.lastIndexOf(':');
        if (colon < 0) {
            return lastEventId;
        }
        return lastEventId.substring(0, colon).equals(instance) ? lastEventId.substring(colon + 1) : "0";
    }

    /**
     * Subscribes a new connection.
     *
     * @param filter which events it gets
     * @param routine whether it also gets the routine events (ready, started, succeeded)
     * @param lastEventId the {@code Last-Event-ID} of a resuming client: the buffered events after it
     *     come first; {@code null} for live events only
     * @return the emitter the controller returns
     * @throws IOException when the first message cannot be written
     */
    public SseEmitter subscribe(Predicate<TaskEvent> filter, boolean routine, @Nullable Long lastEventId)
            throws IOException {
        SseEmitter emitter = new SseEmitter(timeout.toMillis());
        Subscriber s = new Subscriber(emitter, filter, routine, lastEventId != null);
        emitter.onCompletion(s::close);
        emitter.onTimeout(() -> {
            s.close();
            emitter.complete(); // its time ran out: an ordinary end, not an error to log
        });
        emitter.onError(ex -> s.close());
        open.add(s);
        scheduler.addListener(s); // live events queue from now on
        SseEmitter.SseEventBuilder subscribed = SseEmitter.event().comment("subscribed");
        if (lastEventId == null) {
            // an id without data: the client's last event id from now on, and no event
            scheduler.eventLog().ifPresent(log -> subscribed.id(instance + ":" + newestSequence(log)));
        }
        emitter.send(subscribed);
        if (lastEventId != null) {
            s.replayAfter(lastEventId);
        }
        if (!running) {
            s.end(); // the application is stopping
        }
        return emitter;
    }

    /** The newest event's sequence in the log, 0 when it holds none (sequences start at 1). */
    private static long newestSequence(EventLog log) {
        List<TaskEvent> newest = log.recent(1);
        return newest.isEmpty() ? 0 : newest.get(0).sequence();
    }

    /** Connections open now. */
    int openStreams() {
        return open.size();
    }

    @Override
    public void start() {
        running = true;
    }

    /**
     * Completes every open stream, before the web server waits for its requests to end. The
     * senders stay: a stopped context may start again (a paused test context, a checkpoint and
     * restore), and its streams must then flow as before; idle senders end by themselves, and
     * {@link #destroy()} shuts them down with the context.
     */
    @Override
    public void stop() {
        running = false;
        for (Subscriber s : open) {
            s.end();
        }
    }

    /** The context closes: the senders end. */
    @Override
    public void destroy() {
        senders.shutdown();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops first: after it the web server's graceful shutdown finds no stream still open. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE;
    }

    private final class Subscriber implements TaskListener {

        private final SseEmitter emitter;
        private final Predicate<TaskEvent> filter;
        private final boolean routine;
        private final ArrayBlockingQueue<TaskEvent> queue = new ArrayBlockingQueue<>(QUEUE);
        private final AtomicBoolean flushing = new AtomicBoolean();
        private final AtomicLong dropped = new AtomicLong();
        /** The highest sequence written: live events at or below it were replayed already. */
        private volatile long written = -1;

        private volatile @Nullable List<TaskEvent> replay;
        /** While a resuming client's replay is read: live events queue but are not sent yet. */
        private volatile boolean holding;

        private volatile boolean closed;

        Subscriber(SseEmitter emitter, Predicate<TaskEvent> filter, boolean routine, boolean resuming) {
            this.emitter = emitter;
            this.filter = filter;
            this.routine = routine;
            this.holding = resuming;
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
            schedule();
        }

        /**
         * Called after the subscription: what the buffer holds after {@code sequence} goes first;
         * anything published since the subscription is queued too, and sent once, in order.
         */
        void replayAfter(long sequence) {
            scheduler.eventLog().ifPresent(log -> replay = log.events(sequence, REPLAY, filter));
            holding = false;
            schedule();
        }

        private void schedule() {
            if (flushing.compareAndSet(false, true)) {
                try {
                    senders.execute(this::flush);
                } catch (RuntimeException ex) { // stopping: nothing more is sent
                    flushing.set(false);
                }
            }
        }

        /** On a sender thread: writes the replay, then what is queued; goes round again if more came meanwhile. */
        private void flush() {
            if (holding) {
                flushing.set(false);
                if (!holding) {
                    schedule(); // replayAfter ended the hold meanwhile and found this flush still on
                }
                return; // else replayAfter schedules again
            }
            do {
                try {
                    List<TaskEvent> first = replay;
                    if (first != null) {
                        replay = null;
                        for (TaskEvent e : first) {
                            send(e, 0);
                        }
                    }
                    for (TaskEvent e; !closed && (e = queue.poll()) != null; ) {
                        if (e.sequence() > written) {
                            send(e, dropped.getAndSet(0));
                        }
                    }
                } catch (IOException | RuntimeException ex) {
                    close(); // the client went away (or the event could not be written): unsubscribe
                    emitter.completeWithError(ex);
                }
                flushing.set(false);
            } while (!closed && (!queue.isEmpty() || replay != null) && flushing.compareAndSet(false, true));
        }

        private void send(TaskEvent e, long lost) throws IOException {
            SseEmitter.SseEventBuilder message = SseEmitter.event()
                    .id(instance + ":" + e.sequence())
                    .name(e.type().name())
                    .data(HtsEventsEndpoint.describe(e), MediaType.APPLICATION_JSON);
            if (lost > 0) {
                message.comment("dropped " + lost + " events (the client reads slower than they come)");
            }
            emitter.send(message);
            written = Math.max(written, e.sequence());
        }

        /** Unsubscribes; idempotent. */
        void close() {
            closed = true;
            queue.clear();
            scheduler.removeListener(this);
            open.remove(this);
        }

        /** The application stops: the stream ends normally. */
        void end() {
            close();
            try {
                emitter.complete();
            } catch (RuntimeException ignored) {
                // already completed
            }
        }
    }
}
