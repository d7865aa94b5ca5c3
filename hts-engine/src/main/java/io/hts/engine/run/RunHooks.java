package io.hts.engine.run;

import io.hts.engine.graph.internal.CompiledGraph;
import io.hts.engine.run.internal.RunHandle;
import org.jspecify.annotations.Nullable;

/**
 * The kernel's view of one run given to its extension ({@link RunHandle}): made only for a run
 * whose graph has tasks an extension owns. Holds nothing of its own.
 */
final class RunHooks implements RunHandle {

    private final GraphRun run;

    RunHooks(GraphRun run) {
        this.run = run;
    }

    @Override
    public long runId() {
        return run.runId();
    }

    @Override
    public CompiledGraph graph() {
        return run.graph;
    }

    @Override
    public @Nullable Object resultOf(int i) {
        return run.resultOf(i);
    }

    @Override
    public @Nullable Throwable stopCause() {
        return run.state.stopCause();
    }

    @Override
    public boolean cancelRequested(int i) {
        return run.propagation.taskCancelRequest(i) != null;
    }
}
