package io.hts.engine.exec.internal;

import org.jspecify.annotations.Nullable;

/** Adapts a {@link Runnable} submitted through {@link WorkStealingPool#execute(Runnable)}. */
final class RunnableTask extends PoolTask {

    private final Runnable runnable;

    RunnableTask(Runnable runnable) {
        this.runnable = runnable;
    }

    @Override
    protected @Nullable PoolTask execute(Worker worker) {
        worker.flushCountsUnless(null);
        runnable.run();
        return null;
    }
}
