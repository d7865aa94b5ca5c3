package io.hts.engine.exec;

import java.util.List;

/**
 * A snapshot of a worker pool's counters.
 *
 * @param parallelism the number of workers
 * @param workers per-worker counters
 * @param priorityQueued tasks waiting in the priority lane
 * @param externalQueued tasks waiting in the external queue
 * @param shutdown whether the pool has been shut down
 * @param terminated whether every worker has ended
 */
public record PoolStats(
        int parallelism,
        List<WorkerStats> workers,
        int priorityQueued,
        int externalQueued,
        boolean shutdown,
        boolean terminated) {

    /** Tasks executed by all workers. */
    public long executed() {
        return workers.stream().mapToLong(WorkerStats::executed).sum();
    }

    /** Successful steals by all workers. */
    public long steals() {
        return workers.stream().mapToLong(WorkerStats::steals).sum();
    }

    /** Empty rescans by idle workers before parking. */
    public long idleSpins() {
        return workers.stream().mapToLong(WorkerStats::idleSpins).sum();
    }

    /** Tasks queued anywhere in the pool. */
    public long queued() {
        return priorityQueued
                + externalQueued
                + workers.stream().mapToLong(WorkerStats::queued).sum();
    }

    /**
     * One worker's counters.
     *
     * @param index the worker's index
     * @param threadName its thread's name
     * @param executed tasks it ran
     * @param steals tasks it stole from other workers
     * @param idleSpins empty rescans before parking
     * @param parks times it parked
     * @param busyNanos time spent not idle
     * @param queued tasks in its deque
     * @param active whether it is busy now
     * @param threadState its thread's state
     */
    public record WorkerStats(
            int index,
            String threadName,
            long executed,
            long steals,
            long idleSpins,
            long parks,
            long busyNanos,
            int queued,
            boolean active,
            Thread.State threadState) {}
}
