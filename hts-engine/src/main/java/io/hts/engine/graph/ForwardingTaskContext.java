package io.hts.engine.graph;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A {@link TaskContext} that forwards to the engine's context of the same attempt: the base of a
 * device backend's richer context (the GPU backend's {@code GpuContext}), which adds its device's
 * API and overrides {@link #device()}.
 */
public abstract class ForwardingTaskContext implements TaskContext {

    private final TaskContext delegate;

    /**
     * Creates the context.
     *
     * @param delegate the engine's context of the attempt
     */
    protected ForwardingTaskContext(TaskContext delegate) {
        this.delegate = delegate;
    }

    @Override
    public String taskName() {
        return delegate.taskName();
    }

    @Override
    public String graphName() {
        return delegate.graphName();
    }

    @Override
    public long runId() {
        return delegate.runId();
    }

    @Override
    public int attempt() {
        return delegate.attempt();
    }

    @Override
    public Device device() {
        return delegate.device();
    }

    @Override
    public int groupIndex() {
        return delegate.groupIndex();
    }

    @Override
    public <U extends @Nullable Object> U input(Task<U> upstream) {
        return delegate.input(upstream);
    }

    @Override
    public <U extends @Nullable Object> List<U> inputs(TaskGroup<U> upstream) {
        return delegate.inputs(upstream);
    }

    @Override
    public boolean isCancelled() {
        return delegate.isCancelled();
    }

    @Override
    public RunResults execute(TaskGraph graph) {
        return delegate.execute(graph);
    }
}
