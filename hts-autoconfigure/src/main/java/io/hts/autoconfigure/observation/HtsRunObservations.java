package io.hts.autoconfigure.observation;

import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * One Micrometer {@link Observation} per graph run, named {@code hts.graph.run}: started when the
 * run is submitted, stopped when it ends, with the low-cardinality keys {@code graph} and
 * {@code outcome} (succeeded, failed, cancelled) and the high-cardinality key {@code run.id}; a
 * failed run's observation carries its error. With tracing on the class path each run becomes a
 * span; with Spring Boot's meter handler, a timer. A listener on run events only: the engine
 * publishes nothing per task for it.
 */
public final class HtsRunObservations implements TaskListener {

    /** The observation's name. */
    public static final String NAME = "hts.graph.run";

    private final ObservationRegistry registry;
    private final ConcurrentHashMap<Long, Observation> open = new ConcurrentHashMap<>();

    /**
     * Creates the listener.
     *
     * @param registry the application's observation registry
     */
    public HtsRunObservations(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onEvent(TaskEvent event) {
        EventType type = event.type();
        if (type == EventType.RUN_SUBMITTED) {
            Observation o = Observation.createNotStarted(NAME, registry).contextualName("hts " + event.graph())
                    .lowCardinalityKeyValue("graph", event.graph())
                    .highCardinalityKeyValue("run.id", Long.toString(event.runId()));
            open.put(event.runId(), o.start());
        }
        else if (type == EventType.RUN_SUCCEEDED || type == EventType.RUN_FAILED || type == EventType.RUN_CANCELLED) {
            Observation o = open.remove(event.runId());
            if (o == null) {
                return;
            }
            o.lowCardinalityKeyValue("outcome", type.name().substring("RUN_".length()).toLowerCase(Locale.ROOT));
            if (event.error() != null) {
                o.error(event.error());
            }
            o.stop();
        }
    }

    @Override
    public boolean wantsRoutineEvents() {
        return false;
    }

    /** Runs observed and not yet ended. */
    public int openRuns() {
        return open.size();
    }
}
