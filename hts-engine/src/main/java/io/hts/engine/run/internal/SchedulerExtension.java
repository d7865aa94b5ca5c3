package io.hts.engine.run.internal;

import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.internal.CompiledGraph;
import org.jspecify.annotations.Nullable;

/**
 * A scheduler's extension (cluster distribution), made by an {@link ExtensionFactory}. Implemented
 * by the extension; called by the kernel from any thread, so thread-safe.
 */
public interface SchedulerExtension {

    /**
     * The scheduler is built: called once, last in its constructor, on the thread that built it.
     * From now on the extension may call the scheduler (and, e.g., serve other members' slices).
     */
    void started();

    /**
     * The tasks of {@code graph} this extension owns, and how it runs them. Called once per graph
     * and scheduler, while the graph's execution plan is made: on the first thread that submits
     * (or validates) the graph on this scheduler, under the compiled graph's lock; the kernel keeps
     * the answer in the plan, shared by every run of the graph.
     *
     * @param graph the compiled graph
     * @return the graph's part, or null when this extension owns none of its tasks
     * @throws GraphValidationException when the graph cannot run with this extension (its
     *     submission fails, naming the tasks)
     */
    @Nullable
    GraphExtension graph(CompiledGraph graph);

    /**
     * The scheduler is shutting down ({@code shutdown()}, also through {@code shutdownNow()} and
     * {@code close()}): called on that thread, each time, so idempotent. Runs already admitted
     * still finish, and the extension still serves them.
     */
    void shutdown();
}
