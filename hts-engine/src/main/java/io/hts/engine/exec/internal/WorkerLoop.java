package io.hts.engine.exec.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a worker thread of a {@link WorkStealingPool} does: find work (priority lane, own deque,
 * shared queue, steal), run it with its continuations, idle, wait inside a task body while helping,
 * and, when a wait is nested too deep to help, block while a spare worker runs in its place. The
 * algorithm and its memory-ordering choices are described in {@link WorkStealingPool} and
 * {@link IdleWorkers}; this class holds no state of its own beyond the spares.
 */
final class WorkerLoop {

    private static final Logger log = LoggerFactory.getLogger(WorkerLoop.class);

    private static final int EXTERNAL_FAIRNESS_MASK = 63;
    /** The most spare workers alive at once. */
    private static final int MAX_SPARES = 256;

    private final WorkStealingPool pool;
    private final Worker[] workers;
    /**
     * The workers' deques by index, for thieves: read here, not through the victim's
     * {@link Worker}, whose fields its thread writes on every task (a steal attempt would miss
     * on that cache line each time).
     */
    private final WorkStealingDeque<PoolTask>[] deques;

    private final IdleWorkers idle;
    private final PriorityLane lane;
    private final ConcurrentLinkedQueue<PoolTask> shared;
    private final int spinsBeforePark;
    final Set<Worker> spares = ConcurrentHashMap.newKeySet();
    private final AtomicInteger spareCount = new AtomicInteger();
    private final AtomicInteger spareSequence = new AtomicInteger();

    WorkerLoop(
            WorkStealingPool pool,
            Worker[] workers,
            IdleWorkers idle,
            PriorityLane lane,
            ConcurrentLinkedQueue<PoolTask> shared,
            int spinsBeforePark) {
        this.pool = pool;
        this.workers = workers;
        @SuppressWarnings("unchecked")
        WorkStealingDeque<PoolTask>[] ds = new WorkStealingDeque[workers.length];
        for (int i = 0; i < workers.length; i++) {
            ds[i] = workers[i].deque;
        }
        this.deques = ds;
        this.idle = idle;
        this.lane = lane;
        this.shared = shared;
        this.spinsBeforePark = spinsBeforePark;
    }

    /** See {@link WorkStealingPool#helpUntil}; called on {@code w}'s own thread. */
    void helpUntil(Worker w, BooleanSupplier done, long deadlineNanos) {
        w.flushCounts();
        PoolTask outer = w.current();
        if (!w.enterHelp(outer)) {
            blockCompensated(w, done, deadlineNanos);
            return;
        }
        try {
            while (!done.getAsBoolean() && !passed(deadlineNanos)) {
                PoolTask task = scan(w);
                if (task == null) {
                    w.flushCounts();
                    task = awaitWork(w, done, deadlineNanos);
                }
                if (task != null) {
                    runTask(w, task);
                }
            }
            w.flushCounts();
        } finally {
            w.exitHelp(outer);
        }
    }

    private static boolean passed(long deadlineNanos) {
        return deadlineNanos != Long.MAX_VALUE && System.nanoTime() - deadlineNanos >= 0;
    }

    /** A wait nested too deep to help: block, with a spare worker running in this one's place. */
    private void blockCompensated(Worker w, BooleanSupplier done, long deadlineNanos) {
        Worker spare = startSpare();
        try {
            while (!done.getAsBoolean() && !passed(deadlineNanos)) {
                if (deadlineNanos == Long.MAX_VALUE) {
                    LockSupport.park(pool);
                } else {
                    LockSupport.parkNanos(pool, deadlineNanos - System.nanoTime());
                }
            }
        } finally {
            if (spare != null) {
                spare.retired = true; // the spare ends after its current task
                LockSupport.unpark(spare);
            }
        }
    }

    private @Nullable Worker startSpare() {
        if (spareCount.incrementAndGet() > MAX_SPARES) {
            spareCount.decrementAndGet();
            log.warn(
                    "{} spare HTS workers are running for waits nested more than {} deep; this wait blocks its"
                            + " worker without a spare",
                    MAX_SPARES,
                    Worker.MAX_HELP_DEPTH);
            return null;
        }
        int index = workers.length + spareSequence.getAndIncrement() % MAX_SPARES;
        Worker spare = new Worker(pool, index, pool.threadNamePrefix() + "spare-" + index, null, true);
        spares.add(spare);
        spare.start();
        return spare;
    }

    /** A worker thread's life. */
    void run(Worker w) {
        if (w.spare) {
            runSpare(w);
            return;
        }
        w.counters.becameActive(System.nanoTime());
        try {
            while (true) {
                PoolTask task = scan(w);
                if (task == null) {
                    w.flushCounts();
                    w.setCurrent(null);
                    task = awaitWork(w, null, Long.MAX_VALUE);
                    if (task == null) {
                        return;
                    }
                }
                runTask(w, task);
            }
        } finally {
            w.flushCounts();
            w.counters.becameIdle(System.nanoTime());
            w.setCurrent(null);
            pool.workerEnded();
        }
    }

    /** A spare runs shared, urgent and stolen work until the wait it stands in for ends. */
    private void runSpare(Worker w) {
        try {
            while (!w.retired) {
                PoolTask task = scan(w);
                if (task != null) {
                    runTask(w, task);
                    continue;
                }
                w.flushCounts();
                w.setCurrent(null);
                LockSupport.parkNanos(pool, 100_000); // spares are rare and short-lived: they poll
            }
        } finally {
            w.flushCounts();
            w.setCurrent(null);
            spares.remove(w);
            spareCount.decrementAndGet();
        }
    }

    /** Runs a task and the chain of continuations it hands back. */
    private void runTask(Worker w, PoolTask first) {
        PoolTask task = first;
        boolean continuation = false;
        while (task != null) {
            if (continuation && lane.size() != 0) {
                PoolTask urgent = lane.poll();
                if (urgent != null) {
                    w.push(task);
                    task = urgent;
                    w.pausedBetweenTasks();
                }
            }
            w.setCurrent(task);
            w.beforeTask();
            PoolTask next;
            try {
                next = task.execute(w);
            } catch (Throwable ex) {
                next = null;
                reportTaskFailure(w, ex);
            }
            w.afterTask();
            w.counters.executed();
            task = next;
            continuation = true;
        }
        // current keeps pointing at the finished task until the next one starts or the worker
        // idles: one reference store per task instead of two (each is a GC write barrier).
    }

    private @Nullable PoolTask scan(Worker w) {
        PoolTask t;
        if (lane.size() != 0 && (t = lane.poll()) != null) {
            w.pausedBetweenTasks();
            if (lane.size() != 0) {
                pool.signalWork();
            }
            return t;
        }
        if ((++w.scans & EXTERNAL_FAIRNESS_MASK) == 0 && (t = shared.poll()) != null) {
            // Now and then the shared queue goes before the own deque, so that a new run is not
            // starved by workers busy with the local work of a long one.
            w.pausedBetweenTasks();
            return t;
        }
        if ((t = w.deque.pop()) != null) {
            return t;
        }
        w.pausedBetweenTasks();
        if ((t = shared.poll()) != null) {
            if (!shared.isEmpty()) {
                pool.signalWork();
            }
            return t;
        }
        return steal(w);
    }

    private @Nullable PoolTask steal(Worker w) {
        WorkStealingDeque<PoolTask>[] ds = deques;
        int n = ds.length;
        if (n == 1 && !w.spare) {
            return null;
        }
        int r = w.victimSeed;
        r ^= r << 13;
        r ^= r >>> 17;
        r ^= r << 5;
        w.victimSeed = r;
        int start = (r & Integer.MAX_VALUE) % n;
        WorkStealingDeque<PoolTask> own = w.deque;
        for (int i = 0; i < n; i++) {
            WorkStealingDeque<PoolTask> victim = ds[(start + i) % n];
            if (victim == own) {
                continue;
            }
            PoolTask t = victim.steal();
            if (t != null) {
                w.counters.stole();
                if (!victim.isEmpty()) {
                    pool.signalWork();
                }
                return t;
            }
        }
        return null;
    }

    /**
     * Spins, then queues as idle and parks. Returns work found, or {@code null} when the worker
     * should end (the pool shut down and a scan after that found nothing) or, for a helping wait,
     * when {@code done} holds or the deadline passed.
     */
    private @Nullable PoolTask awaitWork(Worker w, @Nullable BooleanSupplier done, long deadlineNanos) {
        WorkerCounters counters = w.counters;
        IdleWorkers.Slot slot = w.idle;
        PoolTask t;
        if (slot == null) { // a spare waiting inside a body: it polls, as spares do
            while (done != null && !done.getAsBoolean() && !passed(deadlineNanos)) {
                if ((t = scan(w)) != null) {
                    return t;
                }
                LockSupport.parkNanos(pool, 100_000);
            }
            return null;
        }
        counters.becameIdle(System.nanoTime());
        for (int i = 0; i < spinsBeforePark && done == null; i++) {
            Thread.onSpinWait();
            if ((t = scan(w)) != null) {
                counters.becameActive(System.nanoTime());
                return t;
            }
            counters.idleSpin();
        }
        while (true) {
            if (done == null && pool.isShutdown()) {
                t = scan(w); // a scan after reading the shut-down state: then nothing more can arrive
                if (t == null) {
                    return null;
                }
                counters.becameActive(System.nanoTime());
                return t;
            }
            idle.enqueue(slot);
            if ((t = scan(w)) != null) {
                idle.leave(slot);
                counters.becameActive(System.nanoTime());
                return t;
            }
            if (done != null && (done.getAsBoolean() || passed(deadlineNanos))) {
                idle.leave(slot);
                counters.becameActive(System.nanoTime());
                return null;
            }
            counters.parked();
            // A stray interrupt (a task that interrupted itself) would make park return at once
            // and turn this loop into a spin; the pool uses unpark, never interrupts.
            Thread.interrupted();
            while (idle.isQueued(slot) && (done != null || !pool.isShutdown())) {
                if (done != null) {
                    if (done.getAsBoolean() || passed(deadlineNanos)) {
                        break;
                    }
                    if (deadlineNanos != Long.MAX_VALUE) {
                        LockSupport.parkNanos(pool, deadlineNanos - System.nanoTime());
                        continue;
                    }
                }
                LockSupport.park(pool);
            }
            idle.leave(slot);
            if ((t = scan(w)) != null) {
                counters.becameActive(System.nanoTime());
                return t;
            }
            if (done != null && (done.getAsBoolean() || passed(deadlineNanos))) {
                counters.becameActive(System.nanoTime());
                return null;
            }
        }
    }

    private void reportTaskFailure(Worker w, Throwable ex) {
        try {
            pool.taskFailureHandler.uncaughtException(w, ex);
        } catch (Throwable ignored) {
            // a failing handler must not end the worker
        }
    }
}
