package io.hts.autoconfigure.observation;

import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.observe.TaskScope;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One Micrometer {@link Observation} per graph run, named {@code hts.graph.run}: started when the
 * run is submitted, stopped when it ends, with the low-cardinality keys {@code graph} and
 * {@code outcome} (succeeded, failed, cancelled) and the high-cardinality key {@code run.id}; a
 * failed run's observation carries its error. With tracing on the class path each run becomes a
 * span; with Spring Boot's meter handler, a timer. A listener on run events only: the engine
 * publishes nothing per task for it. It is also a {@link TaskScope}: each body runs with its run's
 * observation current (and, with {@code hts.observation.tasks}, in an observation of its own).
 */
public final class HtsRunObservations implements TaskListener, TaskScope {

    /** The observation's name. */
    public static final String NAME = "hts.graph.run";

    /** The name of a task's observation, with {@code hts.observation.tasks}. */
    public static final String TASK_NAME = "hts.task";

    private final ObservationRegistry registry;
    private final boolean perTask;
    private final ConcurrentHashMap<Long, Observation> open = new ConcurrentHashMap<>();

    /**
     * Creates the listener.
     *
     * @param registry the application's observation registry
     */
    public HtsRunObservations(ObservationRegistry registry) {
        this(registry, false);
    }

    /**
     * Creates the listener and body scope.
     *
     * @param registry the application's observation registry
     * @param perTask whether each task body is an {@value #TASK_NAME} observation of its own, a child
     *     of its run's (a span a task where tracing is set up)
     */
    public HtsRunObservations(ObservationRegistry registry, boolean perTask) {
        this.registry = registry;
        this.perTask = perTask;
    }

    /**
     * Around each body, on its thread: the run's observation is the current one (so what the body
     * observes, or logs with trace ids, belongs to the run), or, with per-task observations, the
     * task's, a child of the run's.
     */
    @Override
    public Scope open(long runId, String graph, String task) {
        Observation run = open.get(runId);
        if (run == null) {
            return Scope.NONE; // not observed (submitted before this listener, say)
        }
        if (!perTask) {
            Observation.Scope scope = run.openScope();
            return scope::close;
        }
        Observation child = Observation.createNotStarted(TASK_NAME, registry)
                .parentObservation(run)
                .contextualName("hts " + graph + "/" + task)
                .lowCardinalityKeyValue("graph", graph)
                .highCardinalityKeyValue("task", task)
                .highCardinalityKeyValue("run.id", Long.toString(runId))
                .start();
        Observation.Scope scope = child.openScope();
        return () -> {
            scope.close();
            child.stop();
        };
    }

    @Override
    public void onEvent(TaskEvent event) {
        EventType type = event.type();
        if (type == EventType.RUN_SUBMITTED) {
            Observation o = Observation.createNotStarted(NAME, registry)
                    .contextualName("hts " + event.graphName())
                    .lowCardinalityKeyValue("graph", event.graphName())
                    .highCardinalityKeyValue("run.id", Long.toString(event.runId()));
            open.put(event.runId(), o.start());
        } else if (type == EventType.RUN_SUCCEEDED || type == EventType.RUN_FAILED || type == EventType.RUN_CANCELLED) {
            Observation o = open.remove(event.runId());
            if (o == null) {
                return;
            }
            o.lowCardinalityKeyValue(
                    "outcome", type.name().substring("RUN_".length()).toLowerCase(Locale.ROOT));
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
