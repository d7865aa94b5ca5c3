package io.hts.engine.graph;

import java.util.List;

/**
 * Something a task can depend on: a {@link Task}, every member of a {@link TaskGroup}, or a
 * {@link TaskBarrier}.
 */
public sealed interface Dependency permits Task, TaskGroup, TaskBarrier {

    /** The graph this dependency belongs to. */
    TaskGraph graph();

    /** The tasks a dependent waits for. */
    List<Task<?>> tasks();
}
