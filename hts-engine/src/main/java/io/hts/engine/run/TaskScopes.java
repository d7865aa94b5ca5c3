package io.hts.engine.run;

import io.hts.engine.observe.TaskScope;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's {@link TaskScope}s around a body: opened in the order they were registered,
 * closed in the reverse order, each isolated (one that throws is logged and skipped; the body still
 * runs and its outcome is the task's). Immutable; thread confinement per body.
 */
final class TaskScopes {

    private static final Logger log = LoggerFactory.getLogger(TaskScopes.class);

    private final TaskScope[] scopes;
    private final AtomicBoolean warned = new AtomicBoolean();

    private TaskScopes(List<TaskScope> scopes) {
        this.scopes = scopes.toArray(new TaskScope[0]);
    }

    /** The MDC scope first when {@code logContext}, then the builder's scopes in the order added. */
    static TaskScopes of(boolean logContext, List<TaskScope> added) {
        List<TaskScope> all = new java.util.ArrayList<>(added.size() + 1);
        if (logContext) {
            all.add(LogContext.SCOPE);
        }
        all.addAll(added);
        return new TaskScopes(all);
    }

    boolean isEmpty() {
        return scopes.length == 0;
    }

    /** Runs {@code body} for task {@code i} of {@code run} inside every scope. */
    <T> T around(GraphRun run, int i, Callable<T> body) throws Exception {
        return around(run, run.topology.name(i), body);
    }

    /** Runs {@code body} for the task named {@code task} of {@code run} (a dynamic task's) inside every scope. */
    <T> T around(GraphRun run, String task, Callable<T> body) throws Exception {
        TaskScope.Scope[] open = new TaskScope.Scope[scopes.length];
        for (int k = 0; k < scopes.length; k++) {
            open[k] = openOne(scopes[k], run, task);
        }
        try {
            return body.call();
        } finally {
            for (int k = open.length - 1; k >= 0; k--) {
                closeOne(open[k]);
            }
        }
    }

    private TaskScope.Scope openOne(TaskScope scope, GraphRun run, String task) {
        try {
            TaskScope.Scope s = scope.open(run.runId(), run.topology.name(), task);
            return s != null ? s : TaskScope.Scope.NONE;
        } catch (Throwable ex) {
            failed(scope, "opening", ex);
            return TaskScope.Scope.NONE;
        }
    }

    private void closeOne(TaskScope.Scope s) {
        try {
            s.close();
        } catch (Throwable ex) {
            failed(s, "closing", ex);
        }
    }

    private void failed(@Nullable Object what, String doing, Throwable ex) {
        if (warned.compareAndSet(false, true)) {
            log.warn(
                    "A task scope threw while {} ({}); the body runs without it (further failures at DEBUG)",
                    doing,
                    what == null ? "null" : what.getClass().getName(),
                    ex);
        } else {
            log.debug("A task scope threw while {}", doing, ex);
        }
    }
}
