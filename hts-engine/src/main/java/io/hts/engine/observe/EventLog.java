package io.hts.engine.observe;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A bounded ring buffer of recent events: the newest {@link #capacity()} events the scheduler
 * logged, oldest overwritten first. Read it with a cursor: pass the last sequence you saw as
 * {@code after} to get only newer events.
 *
 * <p>Appends are serialised by a lock, and sequence numbers of logged events are assigned under
 * it, so the buffer is always in sequence order and a cursor never skips an event that is still
 * in the buffer. Only notable events come here by default, so the lock is off the hot path.
 */
public final class EventLog {

    private final TaskEvent[] ring;
    private long appended;

    /**
     * Creates a log.
     *
     * @param capacity the number of events kept, 1 or more
     */
    public EventLog(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("event buffer capacity must be 1 or more, was " + capacity);
        }
        this.ring = new TaskEvent[capacity];
    }

    /** The number of events kept. */
    public int capacity() {
        return ring.length;
    }

    synchronized void append(TaskEvent event) {
        ring[(int) (appended % ring.length)] = event;
        appended++;
    }

    /**
     * Events newer than a cursor, oldest first.
     *
     * @param afterSequence return only events with a larger sequence; -1 for all
     * @param limit the most events to return (the oldest first)
     * @param filter which events to return
     * @return the events
     */
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

    /**
     * The most recent events, oldest first.
     *
     * @param limit the most events to return (the newest ones)
     * @return the events
     */
    public List<TaskEvent> recent(int limit) {
        List<TaskEvent> all = events(-1, Integer.MAX_VALUE, e -> true);
        return all.size() <= limit ? all : List.copyOf(all.subList(all.size() - limit, all.size()));
    }
}
