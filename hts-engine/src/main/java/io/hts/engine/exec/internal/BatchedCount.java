package io.hts.engine.exec.internal;

/**
 * A shared counter that workers add to in batches: each worker accumulates its additions locally
 * ({@link Worker#countLocally}) and adds them at once when the batch is full, before it runs work
 * of another counter, and before it goes idle. A run's count of finished tasks is one: one shared
 * atomic per task would be a cache line bounced between every pair of workers.
 */
@FunctionalInterface
public interface BatchedCount {

    /**
     * Adds a batch.
     *
     * @param count how many were counted locally since the last batch
     */
    void add(int count);
}
