package io.hts.engine.run;

import io.hts.engine.exec.internal.WorkStealingPool;
import io.hts.engine.graph.TaskGraph;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * Which runs a scheduler admits, which are active, and when its threads may stop.
 *
 * <p>States: RUNNING (every run is admitted), SHUTDOWN (new runs are refused, except a run a task
 * of a still active run starts on the scheduler's own worker: a nested run belongs to work already
 * admitted, and a slice of an active run that this member coordinates sent back to it), DRAINED
 * (nothing is admitted; the scheduler's threads and backends are being shut
 * down). Admitting a run and moving to DRAINED happen under one lock, and DRAINED follows only when
 * no run is active, so no admitted run is ever cut off; the thread that removes the last active run
 * after the shutdown, or the shutdown itself when none is active, drains.
 */
final class RunAdmission {

    private static final int RUNNING = 0;
    private static final int SHUTDOWN = 1;
    private static final int DRAINED = 2;

    private final WorkStealingPool pool;
    private final Runnable drain;
    private final Object lock = new Object();
    private final Map<Long, GraphRun> active = new ConcurrentHashMap<>();
    private final AtomicLong runIds = new AtomicLong();
    private final CountDownLatch drained = new CountDownLatch(1);
    private volatile int state = RUNNING;

    /**
     * @param pool the scheduler's pool (its workers may start nested runs after a shutdown)
     * @param drain stops the scheduler's threads and closes its backends; run once, under the lock
     */
    RunAdmission(WorkStealingPool pool, Runnable drain) {
        this.pool = pool;
        this.drain = drain;
    }

    /** Whether a run would be admitted now (a check before the work of preparing one). */
    boolean admits() {
        int s = state;
        return s == RUNNING || (s == SHUTDOWN && pool.currentWorker() != null);
    }

    /**
     * Admits a run: gives it the next id and registers it as active.
     *
     * @param owedTo the id of the active run it belongs to (a slice of that run sent back to this
     *     member), admitted after a shutdown while that run is active; -1 for none
     * @throws RejectedExecutionException when the scheduler no longer admits it
     */
    GraphRun admit(TaskGraph graph, long owedTo, LongFunction<GraphRun> create) {
        synchronized (lock) {
            boolean owed = state == SHUTDOWN && owedTo >= 0 && active.containsKey(owedTo);
            if (!owed && !admits()) {
                throw new RejectedExecutionException(
                        "the scheduler is shut down; a run of graph '" + graph.name() + "' was not accepted");
            }
            GraphRun run = create.apply(runIds.incrementAndGet());
            active.put(run.runId(), run);
            return run;
        }
    }

    /** A run finished; after a shutdown the last one drains. */
    void finished(GraphRun run) {
        active.remove(run.runId());
        if (state != RUNNING) {
            synchronized (lock) {
                drainIfIdle();
            }
        }
    }

    /** Stops admitting runs; drains at once when none is active. */
    void shutdown() {
        synchronized (lock) {
            if (state == RUNNING) {
                state = SHUTDOWN;
            }
            drainIfIdle();
        }
    }

    private void drainIfIdle() {
        if (state == SHUTDOWN && active.isEmpty()) {
            state = DRAINED;
            try {
                drain.run();
            } finally {
                drained.countDown();
            }
        }
    }

    boolean isShutdown() {
        return state != RUNNING;
    }

    boolean isDrained() {
        return drained.getCount() == 0;
    }

    boolean awaitDrained(long nanos) throws InterruptedException {
        return drained.await(nanos, TimeUnit.NANOSECONDS);
    }

    Collection<GraphRun> active() {
        return List.copyOf(active.values());
    }

    Optional<GraphRun> active(long runId) {
        return Optional.ofNullable(active.get(runId));
    }
}
