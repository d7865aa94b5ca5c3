package io.hts.engine.graph;

import java.util.List;

/**
 * A graph, or a task being added to it, is not valid. The message names the offending tasks and
 * says what would be accepted; {@link #problem()} and {@link #tasks()} give the same in data.
 */
public class GraphValidationException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final Problem problem;
    private final List<String> tasks;

    /**
     * Creates the exception.
     *
     * @param problem the kind of problem
     * @param tasks the offending task names (for a cycle, in cycle order)
     * @param message the explanation
     */
    public GraphValidationException(Problem problem, List<String> tasks, String message) {
        super(message);
        this.problem = problem;
        this.tasks = List.copyOf(tasks);
    }

    /** The kind of problem. */
    public Problem problem() {
        return problem;
    }

    /** The names of the offending tasks; for a cycle, the tasks on it in order. */
    public List<String> tasks() {
        return tasks;
    }

    /** The kinds of invalid graph. */
    public enum Problem {
        /** Dependencies form a cycle. */
        CYCLE,
        /** A task depends on itself. */
        SELF_DEPENDENCY,
        /** Two tasks (or groups) share a name. */
        DUPLICATE_NAME,
        /** A task depends on a task of another graph. */
        FOREIGN_DEPENDENCY,
        /** A task depends on a name that is not in the graph. */
        UNKNOWN_DEPENDENCY,
        /** A task has no body. */
        MISSING_BODY,
        /** A setting is out of range (negative retries, a too-short timeout, ...). */
        INVALID_SETTING,
        /** No device available to the scheduler can run the task (e.g. GPU-only without a GPU backend). */
        NO_DEVICE,
        /** A task asks for a resource the scheduler does not have, or more than its capacity. */
        UNKNOWN_RESOURCE,
        /** The graph has no tasks. */
        EMPTY
    }
}
