package io.hts.engine.observe;

import java.util.List;
import java.util.function.Predicate;

/**
 * The scheduler's recent events: the newest {@link #capacity()} events it logged, oldest
 * overwritten first, in sequence order ({@code Scheduler.eventLog()}). Read it with a cursor: pass
 * the last sequence you saw as {@code afterSequence} to get only newer events; a cursor never skips
 * an event that the log still holds. Only notable events are logged by default
 * ({@link EventDetail#NOTABLE}).
 */
public interface EventLog {

    /** The number of events kept. */
    int capacity();

    /**
     * Events newer than a cursor, oldest first.
     *
     * @param afterSequence return only events with a larger sequence; -1 for all
     * @param limit the most events to return (the oldest first)
     * @param filter which events to return
     * @return the events
     */
    List<TaskEvent> events(long afterSequence, int limit, Predicate<? super TaskEvent> filter);

    /**
     * The most recent events, oldest first.
     *
     * @param limit the most events to return (the newest ones)
     * @return the events
     */
    default List<TaskEvent> recent(int limit) {
        List<TaskEvent> all = events(-1, Integer.MAX_VALUE, e -> true);
        return all.size() <= limit ? all : List.copyOf(all.subList(all.size() - limit, all.size()));
    }
}
