package io.hts.engine.observe.internal;

import io.hts.engine.observe.EventLog;
import io.hts.engine.observe.TaskEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** The {@link EventLog} of a scheduler: a bounded ring buffer, written by its {@link EventBus}. */
public final class EventRing implements EventLog {

    /*
     * Appends and reads hold this object's monitor. The bus takes a logged event's sequence number
     * under the same monitor (see EventBus.publish), so the ring is always in sequence order and a
     * reader's cursor never skips an event still in it. Only notable events come here by default,
     * so the monitor is off the hot path.
     */

    private final TaskEvent[] ring;
    private long appended;

    /**
     * Creates a ring.
     *
     * @param capacity the number of events kept, 1 or more
     */
    public EventRing(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("event buffer capacity must be 1 or more, was " + capacity);
        }
        this.ring = new TaskEvent[capacity];
    }

    @Override
    public int capacity() {
        return ring.length;
    }

    /**
     * Appends an event, overwriting the oldest when full; the caller holds this ring's monitor
     * while it took the event's sequence number.
     *
     * @param event the event
     */
    public synchronized void append(TaskEvent event) {
        ring[(int) (appended % ring.length)] = event;
        appended++;
    }

    @Override
    public List<TaskEvent> events(long afterSequence, int limit, Predicate<? super TaskEvent> filter) {
        TaskEvent[] copy;
        synchronized (this) {
            int n = (int) Math.min(appended, ring.length);
            copy = new TaskEvent[n];
            long first = appended - n;
            for (int i = 0; i < n; i++) {
                copy[i] = ring[(int) ((first + i) % ring.length)];
            }
        }
        List<TaskEvent> out = new ArrayList<>(Math.min(limit, copy.length));
        for (TaskEvent e : copy) {
            if (out.size() >= limit) {
                break;
            }
            if (e.sequence() > afterSequence && filter.test(e)) {
                out.add(e);
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return "EventLog[capacity=" + ring.length + "]";
    }
}
