package io.hts.autoconfigure.actuate;

import io.hts.engine.observe.EventType;
import java.io.IOException;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /actuator/htsevents/stream} (under {@code htsevents}' path mapping, when it has one):
 * the scheduler's events as they happen, as server-sent events (event name: the type, id: the
 * sequence number, data: the JSON of {@code htsevents}).
 * Filters as {@code htsevents}: {@code runId}, {@code task}, {@code type}; {@code routine=true} adds
 * the routine events every successful task produces (ready, started, succeeded), which cost the
 * scheduler a little per task while someone listens (asking for a routine {@code type} implies it). On the management context, present when {@code htsevents} is exposed.
 */
@RestController
public class HtsEventStreamController {

    private final HtsEventStream stream;

    /**
     * Creates the controller.
     *
     * @param stream the subscriptions
     */
    public HtsEventStreamController(HtsEventStream stream) {
        this.stream = stream;
    }

    /**
     * Opens a stream.
     *
     * @param runId only events of this run
     * @param task only events of this task (by name)
     * @param type only events of this type
     * @param routine also the routine events
     * @param lastEventId sent by a client that resumes (an EventSource does so by itself): the
     *     buffered events after it come first
     * @param lastEventIdParameter the same as a query parameter ({@code ?lastEventId=}), for a
     *     client that opens a new connection to resume (an EventSource the server closed with an
     *     error status is not reopened by the browser, and a new one cannot set the header); the
     *     header wins when both are given
     * @return the emitter; for an unknown type, a 400 whose JSON body names the accepted ones
     * @throws IOException when the connection fails at once
     */
    @GetMapping(
            path =
                    "${management.endpoints.web.base-path:/actuator}/${management.endpoints.web.path-mapping.htsevents:htsevents}/stream",
            produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public Object stream(
            @RequestParam(required = false) @Nullable String runId,
            @RequestParam(required = false) @Nullable String task,
            @RequestParam(required = false) @Nullable String type,
            @RequestParam(defaultValue = "false") boolean routine,
            @RequestHeader(name = "Last-Event-ID", required = false) @Nullable String lastEventId,
            @RequestParam(name = "lastEventId", required = false) @Nullable String lastEventIdParameter)
            throws IOException {
        String resume = lastEventId != null ? lastEventId : lastEventIdParameter;
        Long run;
        Long resumeAfter;
        try {
            run = EndpointProblems.number("runId", runId, Long.MIN_VALUE, Long.MAX_VALUE, "a run id (a whole number)");
            resumeAfter = EndpointProblems.number(
                    lastEventId != null ? "Last-Event-ID" : "lastEventId",
                    resume == null ? null : stream.sequenceOf(resume),
                    -1,
                    Long.MAX_VALUE,
                    "the id of the last event received, as the stream sent it (instance:sequence, or a sequence number)");
        } catch (EndpointProblems.Bad bad) {
            return answer(bad.response());
        }
        EventType wanted = type == null ? null : HtsEventsEndpoint.eventType(type);
        if (type != null && wanted == null) {
            return answer(HtsEventsEndpoint.unknownType(type));
        }
        return stream.subscribe(
                HtsEventsEndpoint.filter(run, task, wanted),
                routine || (wanted != null && wanted.isRoutine()),
                resumeAfter);
    }

    /**
     * A problem as this controller answers it: a body that says why, whatever
     * server.error.include-message says (a thrown status would hide it).
     */
    private static ResponseEntity<Map<String, Object>> answer(WebEndpointResponse<Map<String, Object>> problem) {
        return ResponseEntity.status(problem.getStatus())
                .contentType(MediaType.APPLICATION_JSON)
                .body(problem.getBody());
    }
}
