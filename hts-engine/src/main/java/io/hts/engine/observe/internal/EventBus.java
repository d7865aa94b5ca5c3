package io.hts.engine.observe.internal;

import io.hts.engine.graph.Device;
import io.hts.engine.observe.DeviceDecision;
import io.hts.engine.observe.EventDetail;
import io.hts.engine.observe.EventLog;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers a scheduler's {@link TaskEvent}s to its {@link EventLog} and to its
 * {@link TaskListener}s; {@link #publish} never throws.
 */
public final class EventBus {

    /*
     * Invariants and memory ordering.
     *
     * Listeners: an immutable array of subscribers, replaced copy-on-write under this object's
     * monitor and read through a volatile field, so a delivery iterates a consistent snapshot
     * without a lock; a listener added while an event is delivered gets the next event. Each
     * listener is asked once, when added, whether it wants routine events; its answer travels in
     * its subscriber (final, so safely published with the array), and a listener whose
     * wantsRoutineEvents() throws gets every event (the failure is counted and logged once).
     * routineWanted and notableWanted are recomputed under the same monitor after each change and
     * read as single volatile reads on the scheduling path.
     *
     * Events are built only when someone wants them (wants, wantsRoutine): the routine ready /
     * started / succeeded events only when the log keeps EventDetail.ALL or a listener asks for
     * routine events. A logged event takes its sequence number under the ring's monitor, so the
     * ring stays in sequence order (see EventRing); an event the log does not keep takes its
     * number outside it.
     *
     * A listener that throws is isolated: whatever it throws, an Error such as
     * StackOverflowError included, is counted and logged (the first time at WARN, then at DEBUG),
     * and delivery goes on, so nothing a listener does can break the bookkeeping of the run whose
     * thread delivers the event.
     */

    private static final Logger log = LoggerFactory.getLogger(EventBus.class);
    private static final Subscriber[] NONE = new Subscriber[0];

    private final @Nullable EventRing eventLog;
    private final EventDetail logDetail;
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong listenerFailures = new AtomicLong();
    private final long epochNanos = System.nanoTime();
    private final Instant epoch = Instant.now();
    private volatile Subscriber[] listeners = NONE;
    private volatile boolean routineWanted;
    private volatile boolean notableWanted;

    /**
     * Creates a bus.
     *
     * @param logCapacity the number of recent events kept, 0 for no log
     * @param logDetail which events the log keeps
     */
    public EventBus(int logCapacity, EventDetail logDetail) {
        this.eventLog = logCapacity > 0 && logDetail != EventDetail.NONE ? new EventRing(logCapacity) : null;
        this.logDetail = Objects.requireNonNull(logDetail, "logDetail");
        recompute();
    }

    /** The recent-events buffer, or {@code null} when disabled. */
    public @Nullable EventLog log() {
        return eventLog;
    }

    /**
     * Subscribes a listener.
     *
     * @param listener the listener
     */
    public synchronized void addListener(TaskListener listener) {
        Objects.requireNonNull(listener, "listener");
        Subscriber[] current = listeners;
        Subscriber[] next = Arrays.copyOf(current, current.length + 1);
        next[current.length] = new Subscriber(listener, askRoutine(listener));
        listeners = next;
        recompute();
    }

    /**
     * Unsubscribes a listener.
     *
     * @param listener the listener
     * @return whether it was subscribed
     */
    public synchronized boolean removeListener(TaskListener listener) {
        Subscriber[] current = listeners;
        for (int i = 0; i < current.length; i++) {
            if (current[i].listener() == listener) {
                Subscriber[] next = new Subscriber[current.length - 1];
                System.arraycopy(current, 0, next, 0, i);
                System.arraycopy(current, i + 1, next, i, current.length - i - 1);
                listeners = next;
                recompute();
                return true;
            }
        }
        return false;
    }

    /**
     * Whether anyone wants events of a type; check before building one.
     *
     * @param type the event type
     * @return whether {@link #publish} would deliver it anywhere
     */
    public boolean wants(EventType type) {
        return type.isRoutine() ? routineWanted : notableWanted;
    }

    /** Whether any listener is subscribed (events may then run user code). */
    public boolean hasListeners() {
        return listeners.length != 0;
    }

    /** Whether anyone wants routine events: a single volatile read for the hot path. */
    public boolean wantsRoutine() {
        return routineWanted;
    }

    /** Exceptions thrown by listeners so far. */
    public long listenerFailures() {
        return listenerFailures.get();
    }

    /**
     * Builds and delivers an event.
     *
     * @param type what happened
     * @param runId the run
     * @param graph the graph's name
     * @param task the task's name, or {@code null} for run events
     * @param taskIndex the task's index, or -1
     * @param device the device, when known
     * @param worker the worker or stream, or -1
     * @param attempt the attempt, or 0
     * @param error the failure, if any
     * @param decision the policy's decision, if any
     * @param detail a note, if any
     */
    public void publish(
            EventType type,
            long runId,
            String graph,
            @Nullable String task,
            int taskIndex,
            @Nullable Device device,
            int worker,
            int attempt,
            @Nullable Throwable error,
            @Nullable DeviceDecision decision,
            @Nullable String detail) {
        try {
            long now = System.nanoTime();
            TaskEvent event;
            EventRing target = eventLog;
            if (target != null && logDetail.accepts(type)) {
                // Sequence numbers of logged events are taken under the log's lock: the log stays in
                // sequence order, so a reader's cursor never skips an event still in the buffer.
                synchronized (target) {
                    event = newEvent(
                            now, type, runId, graph, task, taskIndex, device, worker, attempt, error, decision, detail);
                    target.append(event);
                }
            } else {
                event = newEvent(
                        now, type, runId, graph, task, taskIndex, device, worker, attempt, error, decision, detail);
            }
            deliver(event);
        } catch (Throwable ex) {
            failed(null, null, ex); // building or logging an event failed (out of memory, say): scheduling goes on
        }
    }

    /** An event with the next sequence number, stamped at {@code now}. */
    private TaskEvent newEvent(
            long now,
            EventType type,
            long runId,
            String graph,
            @Nullable String task,
            int taskIndex,
            @Nullable Device device,
            int worker,
            int attempt,
            @Nullable Throwable error,
            @Nullable DeviceDecision decision,
            @Nullable String detail) {
        return new TaskEvent(
                sequence.incrementAndGet(),
                now,
                epoch.plusNanos(now - epochNanos),
                type,
                runId,
                graph,
                task,
                taskIndex,
                device,
                worker,
                attempt,
                error,
                decision,
                detail);
    }

    /**
     * Hands a finished run's final profile to every listener ({@link TaskListener#onRunFinished});
     * never throws.
     *
     * @param profile the profile
     */
    public void runFinished(RunProfile profile) {
        for (Subscriber s : listeners) {
            try {
                s.listener().onRunFinished(profile);
            } catch (Throwable ex) {
                failed(s.listener(), null, ex);
            }
        }
    }

    private void deliver(TaskEvent event) {
        boolean routine = event.type().isRoutine();
        for (Subscriber s : listeners) {
            // An interrupt a listener sets on a worker does not reach a body: a worker clears the flag
            // before each task and after TASK_STARTED, keeping only the engine's own interrupts.
            if (routine && !s.routine()) {
                continue;
            }
            try {
                s.listener().onEvent(event);
            } catch (Throwable ex) {
                failed(s.listener(), event, ex);
            }
        }
    }

    /** Counts and logs a listener's failure; never throws, even when logging or describing fails. */
    private void failed(@Nullable TaskListener listener, @Nullable TaskEvent event, Throwable ex) {
        long n = listenerFailures.incrementAndGet();
        try {
            String what = listener == null
                    ? "publishing an event"
                    : "task listener " + describe(listener) + " on "
                            + (event == null
                                    ? "an event"
                                    : event.type() + " of run " + event.runId()
                                            + (event.taskName() != null ? " task '" + event.taskName() + "'" : ""));
            if (n == 1) {
                log.warn(
                        "{} threw {}; scheduling goes on (further failures at DEBUG)",
                        what,
                        ex.getClass().getName(),
                        ex);
            } else if (log.isDebugEnabled()) {
                log.debug("{} threw {}", what, ex.getClass().getName(), ex);
            }
        } catch (Throwable ignored) {
            // a listener that broke the logger (or a StackOverflowError still unwinding) must not break scheduling
        }
    }

    private static String describe(Object o) {
        try {
            return String.valueOf(o);
        } catch (Throwable ex) {
            return o.getClass().getName();
        }
    }

    /** Asks a listener being added whether it wants routine events; one that cannot say gets them. */
    private boolean askRoutine(TaskListener listener) {
        try {
            return listener.wantsRoutineEvents();
        } catch (Throwable ex) {
            failed(listener, null, ex);
            return true;
        }
    }

    private void recompute() {
        boolean routine = eventLog != null && logDetail == EventDetail.ALL;
        for (Subscriber s : listeners) {
            routine |= s.routine();
        }
        routineWanted = routine;
        notableWanted = eventLog != null || listeners.length > 0;
    }

    /** A listener and its answer, given once when it was added, to whether it wants routine events. */
    private record Subscriber(TaskListener listener, boolean routine) {}
}
