package io.hts.engine.run;

import io.hts.engine.graph.RunStatus;
import java.util.List;

/**
 * A run did not succeed. The message names every failed task (and how many were cancelled); the
 * cause is the first failure, the other failures are suppressed exceptions.
 */
public class GraphRunException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final long runId;
    private final String graph;
    private final RunStatus status;
    private final transient List<TaskFailure> failures;
    private final List<String> cancelled;

    /**
     * Creates the exception.
     *
     * @param runId the run
     * @param graph the graph's name
     * @param status {@link RunStatus#FAILED} or {@link RunStatus#CANCELLED}
     * @param failures the failed tasks, first failure first
     * @param cancelled the names of the cancelled tasks
     */
    public GraphRunException(
            long runId, String graph, RunStatus status, List<TaskFailure> failures, List<String> cancelled) {
        super(
                message(runId, graph, status, failures, cancelled),
                failures.isEmpty() ? null : failures.get(0).error());
        this.runId = runId;
        this.graph = graph;
        this.status = status;
        this.failures = List.copyOf(failures);
        this.cancelled = List.copyOf(cancelled);
        for (int i = 1; i < failures.size(); i++) {
            addSuppressed(failures.get(i).error());
        }
    }

    /** The run. */
    public long runId() {
        return runId;
    }

    /** The graph's name. */
    public String graphName() {
        return graph;
    }

    /** How the run ended. */
    public RunStatus status() {
        return status;
    }

    /** Every failed task, first failure first. */
    public List<TaskFailure> failures() {
        return failures;
    }

    /** The names of the cancelled tasks. */
    public List<String> cancelled() {
        return cancelled;
    }

    private static String message(
            long runId, String graph, RunStatus status, List<TaskFailure> failures, List<String> cancelled) {
        StringBuilder sb = new StringBuilder("run ")
                .append(runId)
                .append(" of graph '")
                .append(graph)
                .append("' ");
        if (status == RunStatus.CANCELLED) {
            sb.append("was cancelled");
        } else {
            sb.append("failed: ")
                    .append(failures.size())
                    .append(failures.size() == 1 ? " task failed [" : " tasks failed [");
            int shown = Math.min(failures.size(), 20);
            for (int i = 0; i < shown; i++) {
                sb.append(i == 0 ? "" : "; ").append(failures.get(i)); // TaskFailure.toString never throws
            }
            if (failures.size() > shown) {
                sb.append("; and ").append(failures.size() - shown).append(" more");
            }
            sb.append(']');
        }
        if (!cancelled.isEmpty()) {
            sb.append("; ")
                    .append(cancelled.size())
                    .append(cancelled.size() == 1 ? " task" : " tasks")
                    .append(" cancelled");
        }
        return sb.toString();
    }
}
