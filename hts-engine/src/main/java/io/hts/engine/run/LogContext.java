package io.hts.engine.run;

import io.hts.engine.observe.TaskScope;
import org.jspecify.annotations.Nullable;
import org.slf4j.MDC;

/**
 * The {@link TaskScope} that puts a task's run id, graph and task name into
 * the SLF4J MDC around its body (keys {@value #RUN}, {@value #GRAPH}, {@value #TASK}), so that what
 * the body logs can be told apart and joined to the run's own lines; the first scope when the
 * scheduler was built with {@code SchedulerBuilder.logContext(true)} (Spring: {@code hts.logging.mdc},
 * on by default).
 *
 * <p>Thread confinement: a body runs on one thread; what it finds in the MDC when it begins is
 * given back when it ends, so a body that runs a nested graph on its worker (the nested bodies
 * set their own keys) keeps its own keys afterwards, and a worker keeps nothing between tasks.
 */
final class LogContext {

    /** The run's id. */
    static final String RUN = "hts.run";
    /** The graph's name. */
    static final String GRAPH = "hts.graph";
    /** The task's name. */
    static final String TASK = "hts.task";

    private LogContext() {}

    /** The scope: sets the task's keys on this thread, and gives back what was there when the body ends. */
    static final TaskScope SCOPE = (runId, graph, task) -> {
        String runBefore = MDC.get(RUN);
        String graphBefore = MDC.get(GRAPH);
        String taskBefore = MDC.get(TASK);
        MDC.put(RUN, Long.toString(runId));
        MDC.put(GRAPH, graph);
        MDC.put(TASK, task);
        return () -> {
            put(RUN, runBefore);
            put(GRAPH, graphBefore);
            put(TASK, taskBefore);
        };
    };

    private static void put(String key, @Nullable String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }
}
