package io.hts.autoconfigure.actuate;

import io.hts.engine.observe.EventLog;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.run.Scheduler;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * {@code /actuator/htsevents}: the scheduler's recent task events from its ring buffer, oldest
 * first, read-only. {@code after} is a cursor (the {@code next} of the previous answer: only later
 * events come back); {@code runId}, {@code task} and {@code type} filter; {@code limit} caps the
 * answer (default 200, at most 10,000), the oldest events first unless {@code newest=true}.
 */
@Endpoint(id = "htsevents", defaultAccess = Access.READ_ONLY)
public class HtsEventsEndpoint {

    static final int DEFAULT_LIMIT = 200;
    static final int MAX_LIMIT = 10_000;

    private final Scheduler scheduler;

    /**
     * Creates the endpoint.
     *
     * @param scheduler the scheduler whose events it serves
     */
    public HtsEventsEndpoint(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    /**
     * The events of one run, task and type; {@code null} leaves that one open.
     *
     * @param run a run id
     * @param task a task name
     * @param type an event type
     * @return the filter
     */
    static Predicate<TaskEvent> filter(@Nullable Long run, @Nullable String task, @Nullable EventType type) {
        return e -> (run == null || e.runId() == run)
                && (task == null || task.equals(e.taskName()))
                && (type == null || e.type() == type);
    }

    /** The event type a parameter names (case-insensitive, {@code -} or {@code _}), or null when none. */
    static @Nullable EventType eventType(String type) {
        try {
            return EventType.valueOf(type.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException ex) {
            return null;
        }
    }

    /** The event types a {@code type} parameter accepts, as one would write them. */
    static String acceptedTypes() {
        return java.util.Arrays.stream(EventType.values())
                        .map(t -> t.name().toLowerCase(Locale.ROOT))
                        .collect(java.util.stream.Collectors.joining(", "))
                + " (case-insensitive)";
    }

    /** What an unknown {@code type} gets: a 400 naming it and the accepted types. */
    static WebEndpointResponse<Map<String, Object>> unknownType(String type) {
        return EndpointProblems.badRequest("type", type, "unknown event type '" + type + "'", acceptedTypes());
    }

    /**
     * One event as the endpoint and the live stream show it.
     *
     * @param e the event
     * @return its fields, absent ones left out
     */
    static Map<String, Object> describe(TaskEvent e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sequence", e.sequence());
        m.put("time", e.time().toString());
        m.put("type", e.type().name());
        m.put("runId", e.runId());
        m.put("graph", e.graphName());
        if (e.taskName() != null) {
            m.put("task", e.taskName());
        }
        if (e.device() != null) {
            m.put("device", e.device().id());
        }
        if (e.worker() >= 0) {
            m.put("worker", e.worker()); // absent, not -1, for an event of no worker or stream
        }
        m.put("attempt", e.attempt());
        if (e.error() != null) {
            m.put("error", e.error().toString());
        }
        if (e.detail() != null) {
            m.put("detail", e.detail());
        }
        return m;
    }

    /**
     * The events after a cursor, filtered.
     *
     * @param after only events with a larger sequence number (default: from the oldest kept)
     * @param runId only events of this run
     * @param task only events of this task (by name)
     * @param type only events of this type (e.g. {@code TASK_FAILED}, case-insensitive)
     * @param limit at most this many events
     * @param newest {@code true}: the newest {@code limit} events (after the cursor) rather than the
     *     oldest, still oldest first; {@code false} when unset
     * @return {@code events}, {@code next} (the cursor for the next call) and {@code capacity}; a 400
     *     naming the accepted types for an unknown {@code type}
     */
    @ReadOperation
    public Object events(
            @Nullable String after,
            @Nullable String runId,
            @Nullable String task,
            @Nullable String type,
            @Nullable String limit,
            @Nullable String newest) {
        boolean fromNewest = newest != null && newest.trim().equalsIgnoreCase("true");
        if (newest != null && !fromNewest && !newest.trim().equalsIgnoreCase("false")) {
            return EndpointProblems.badRequest(
                    "newest",
                    newest,
                    "'" + newest + "' is neither true nor false",
                    "true (the newest events) or false (the oldest, the default)");
        }
        try {
            return events(
                    EndpointProblems.number(
                            "after",
                            after,
                            -1,
                            Long.MAX_VALUE,
                            "a sequence number (the next of" + " the previous answer), or none for the oldest kept"),
                    EndpointProblems.number(
                            "runId", runId, Long.MIN_VALUE, Long.MAX_VALUE, "a run id (a whole number)"),
                    task,
                    type,
                    EndpointProblems.number("limit", limit, 1, MAX_LIMIT, "a whole number from 1 to " + MAX_LIMIT),
                    fromNewest);
        } catch (EndpointProblems.Bad bad) {
            return bad.response();
        }
    }

    /** The newest {@code n} events after the cursor that the filter selects, oldest first. */
    private static List<TaskEvent> newest(EventLog log, long after, int n, Predicate<TaskEvent> filter) {
        List<TaskEvent> all = log.events(after, Integer.MAX_VALUE, filter);
        return all.subList(Math.max(0, all.size() - n), all.size());
    }

    private Object events(
            @Nullable Long after,
            @Nullable Long run,
            @Nullable String task,
            @Nullable String type,
            @Nullable Long limit,
            boolean newest) {
        EventLog log = scheduler.eventLog().orElse(null);
        Map<String, Object> out = new LinkedHashMap<>();
        if (log == null) {
            out.put("events", List.of());
            out.put("next", after == null ? 0 : after);
            out.put("capacity", 0);
            return out;
        }
        EventType wanted = type == null ? null : eventType(type);
        if (type != null && wanted == null) {
            return unknownType(type);
        }
        Predicate<TaskEvent> filter = filter(run, task, wanted);
        int n = limit == null ? DEFAULT_LIMIT : (int) (long) limit;
        long cursor = after == null ? -1 : after;
        List<TaskEvent> events = newest ? newest(log, cursor, n, filter) : log.events(cursor, n, filter);
        List<Map<String, Object>> json = new ArrayList<>(events.size());
        long next = after == null ? 0 : after;
        for (TaskEvent e : events) {
            Map<String, Object> m = describe(e);
            json.add(m);
            next = Math.max(next, e.sequence());
        }
        out.put("events", json);
        out.put("next", next);
        out.put("capacity", log.capacity());
        return out;
    }
}
