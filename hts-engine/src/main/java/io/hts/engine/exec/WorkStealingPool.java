package io.hts.engine.exec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTS's CPU executor: a fixed set of worker threads that balance load by work stealing.
 *
 * <h2>Implementation overview</h2>
 *
 * <p><b>Queues.</b> Each {@link Worker} owns a Chase-Lev {@link WorkStealingDeque}. Work created by
 * a worker (the successors a finished task makes ready) goes to the bottom of its own deque and is
 * popped from there again, LIFO, which keeps data warm in that core's cache; no other thread
 * touches the bottom, so the common path has no lock and no CAS. Work submitted from outside the
 * pool (a graph's roots, completions delivered by the GPU backend or the retry timer) goes to a
 * lock-free external queue. Urgent work goes to the {@link PriorityLane}, a small heap every
 * worker checks first (one volatile read when it is empty).
 *
 * <p><b>Finding work.</b> A worker looks, in order: the priority lane; its own deque; the external
 * queue (every 64th scan looks there first, so external work is never starved by a busy deque);
 * then the deques of the other workers, starting at a random victim (xorshift) and trying
 * each once, stealing from the top (the oldest, typically largest, piece of work). A task may
 * return a continuation, which the worker runs next without queueing it (a chain of dependent
 * tasks runs as a loop on one thread); before running it the worker yields to the priority lane if
 * that is non-empty.
 *
 * <p><b>Idling.</b> A worker that finds nothing spins for a bounded number of rescans
 * ({@link Thread#onSpinWait()} between them), then parks. Parking follows a Dekker-style protocol
 * against lost wake-ups: the worker first publishes itself on the idle stack (a CAS, a full fence),
 * then scans all queues once more, and parks only if that scan is empty. A producer first
 * publishes its work, then executes a full fence and reads the idle stack. Whatever the
 * interleaving, either the producer sees the idle worker and unparks it or the worker sees the
 * work. An idle pool therefore consumes no CPU.
 *
 * <p><b>Waking.</b> To keep wake-ups (a futex system call each) rare, a producer wakes an idle
 * worker only when its push takes a deque from empty to non-empty, for every external or
 * priority submission, and, to spread a burst of work, a thief that succeeds and sees more work
 * left in its victim (or the external queue) wakes one more worker, like {@code ForkJoinPool}'s
 * signal propagation. The idle stack is a Treiber stack packed into one {@code long}: the top
 * worker's index + 1 in the low 16 bits and a version in the high 48 bits that is incremented by
 * every push and pop, which rules out ABA.
 *
 * <p><b>Batched counts.</b> A worker adds to shared counters (a run's finished tasks) in local
 * batches, flushed when full, before work of another counter and always before the worker goes
 * idle, so a count is never held back while its worker waits.
 *
 * <p><b>Counters.</b> Executed tasks, steals, idle spins, parks and busy time are kept per worker
 * in padded {@link WorkerCounters}; busy time is measured per busy period (two clock reads per
 * idle transition), not per task. A task that follows another on a worker without a pause may
 * take the end time of that one as its own start ({@link Worker#handOffNanos()}), so a profiled
 * busy worker reads the clock once per task.
 *
 * <p><b>Shutdown.</b> {@link #shutdown()} rejects further submissions from threads outside the
 * pool, lets workers finish everything queued (including what running tasks create) and then lets
 * them exit; {@link #awaitTermination(Duration)} waits for the last one.
 *
 * <p>This class deliberately does not implement {@link java.util.concurrent.Executor}: Spring
 * Boot's own task executor backs off when an {@code Executor} bean exists.
 */
public final class WorkStealingPool implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WorkStealingPool.class);

    private static final int RUNNING = 0;
    private static final int SHUTDOWN = 1;
    private static final long INDEX_MASK = 0xFFFFL;
    private static final int MAX_THREADS = (int) INDEX_MASK - 1;
    private static final int EXTERNAL_FAIRNESS_MASK = 63;

    private final Worker[] workers;
    private final PriorityLane lane = new PriorityLane();
    private final ConcurrentLinkedQueue<PoolTask> external = new ConcurrentLinkedQueue<>();
    private final AtomicLong idleStack = new AtomicLong();
    private final AtomicInteger liveWorkers;
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final int spinsBeforePark;
    private final Thread.UncaughtExceptionHandler taskFailureHandler;
    private volatile int state = RUNNING;

    private WorkStealingPool(Builder builder) {
        int threads = builder.threads;
        this.spinsBeforePark = builder.spinsBeforePark;
        this.taskFailureHandler = builder.taskFailureHandler;
        this.workers = new Worker[threads];
        this.liveWorkers = new AtomicInteger(threads);
        for (int i = 0; i < threads; i++) {
            workers[i] = new Worker(this, i, builder.threadNamePrefix + i, builder.daemon);
        }
        for (Worker w : workers) {
            w.start();
        }
    }

    /**
     * A builder for a pool.
     *
     * @return a new builder, defaulting to one worker per available processor
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Runs a task on the pool.
     *
     * @param task the task
     * @throws RejectedExecutionException when the pool has been shut down and the caller is not
     *     one of its workers
     */
    public void execute(Runnable task) {
        submit(new RunnableTask(Objects.requireNonNull(task, "task")));
    }

    /**
     * Submits a pool task: to the caller's own deque when the caller is a worker of this pool,
     * otherwise to the external queue.
     *
     * @param task the task
     * @throws RejectedExecutionException when the pool has been shut down and the caller is not
     *     one of its workers
     */
    public void submit(PoolTask task) {
        Worker w = currentWorker();
        if (w != null) {
            w.push(task);
            return;
        }
        if (state != RUNNING) {
            throw new RejectedExecutionException("the HTS worker pool has been shut down");
        }
        external.offer(task);
        signalWork();
    }

    /**
     * Submits a task to the priority lane, which every worker checks before its own deque.
     *
     * @param task the task
     * @param priority higher runs first
     * @param cost estimated cost in nanoseconds; among equal priorities the cheaper runs first
     */
    public void submitPriority(PoolTask task, int priority, long cost) {
        if (state != RUNNING && currentWorker() == null) {
            throw new RejectedExecutionException("the HTS worker pool has been shut down");
        }
        lane.add(task, priority, cost);
        signalWork();
    }

    /**
     * The calling thread as a worker of this pool.
     *
     * @return the worker, or {@code null} when the caller is not a worker of this pool
     */
    public @Nullable Worker currentWorker() {
        Thread t = Thread.currentThread();
        if (t instanceof Worker w && w.pool() == this) {
            return w;
        }
        return null;
    }

    /** The number of worker threads. */
    public int parallelism() {
        return workers.length;
    }

    /**
     * Calls the action for every task a worker is running at this moment, or has just finished
     * (a worker forgets its last task when it starts the next or goes idle); callers check the
     * task's own state.
     *
     * @param action called once per running task, on the calling thread
     */
    public void forEachRunning(Consumer<PoolTask> action) {
        for (Worker w : workers) {
            PoolTask t = w.current();
            if (t != null) {
                action.accept(t);
            }
        }
    }

    /** Tasks queued anywhere in the pool, an estimate. */
    public int queuedTasks() {
        long n = lane.size() + (long) external.size();
        for (Worker w : workers) {
            n += w.deque.size();
        }
        return (int) Math.min(n, Integer.MAX_VALUE);
    }

    /** Workers that are busy (not idle) at this moment, an estimate. */
    public int activeWorkers() {
        int n = 0;
        for (Worker w : workers) {
            if (w.counters.isActive()) {
                n++;
            }
        }
        return n;
    }

    /** Tasks executed by all workers so far. */
    public long totalExecuted() {
        long n = 0;
        for (Worker w : workers) {
            n += w.counters.executedCount();
        }
        return n;
    }

    /** Successful steals by all workers so far. */
    public long totalSteals() {
        long n = 0;
        for (Worker w : workers) {
            n += w.counters.stealCount();
        }
        return n;
    }

    /** Empty rescans by idle workers so far. */
    public long totalIdleSpins() {
        long n = 0;
        for (Worker w : workers) {
            n += w.counters.idleSpinCount();
        }
        return n;
    }

    /** The mean busy time per executed task, an estimate of a typical CPU task's cost; 0 before any. */
    public long meanTaskNanos() {
        long now = System.nanoTime();
        long busy = 0;
        long executed = 0;
        for (Worker w : workers) {
            busy += w.counters.busyNanos(now);
            executed += w.counters.executedCount();
        }
        return executed == 0 ? 0 : busy / executed;
    }

    /** A snapshot of the per-worker counters. */
    public PoolStats stats() {
        long now = System.nanoTime();
        List<PoolStats.WorkerStats> list = new ArrayList<>(workers.length);
        for (Worker w : workers) {
            WorkerCounters c = w.counters;
            list.add(new PoolStats.WorkerStats(w.index(), w.getName(), c.executedCount(), c.stealCount(),
                    c.idleSpinCount(), c.parkCount(), c.busyNanos(now), w.deque.size(), c.isActive(),
                    w.getState()));
        }
        return new PoolStats(workers.length, list, lane.size(), external.size(), isShutdown(),
                isTerminated());
    }

    /** The worker threads, for diagnostics and tests (thread states). */
    public List<Thread> threads() {
        return List.of(workers);
    }

    /**
     * Stops accepting tasks from outside the pool. Queued tasks, and tasks that running tasks
     * create, still run; then the workers end.
     */
    public void shutdown() {
        if (state == RUNNING) {
            state = SHUTDOWN;
        }
        for (Worker w : workers) {
            LockSupport.unpark(w);
        }
    }

    /** Whether {@link #shutdown()} has been called. */
    public boolean isShutdown() {
        return state != RUNNING;
    }

    /** Whether every worker has ended. */
    public boolean isTerminated() {
        if (terminated.getCount() != 0) {
            return false;
        }
        for (Worker w : workers) {
            if (w.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Waits for every worker to end after {@link #shutdown()}.
     *
     * @param timeout the longest time to wait
     * @return whether the pool terminated in time
     * @throws InterruptedException when interrupted while waiting
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (!terminated.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
            return false;
        }
        for (Worker w : workers) {
            long left = deadline - System.nanoTime();
            if (left <= 0 && w.isAlive()) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedJoin(w, Math.max(1, left));
            if (w.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** Shuts the pool down and waits for its workers to end. */
    @Override
    public void close() {
        shutdown();
        boolean interrupted = false;
        while (true) {
            try {
                terminated.await();
                for (Worker w : workers) {
                    w.join();
                }
                break;
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- worker loop

    void runWorker(Worker w) {
        w.counters.becameActive(System.nanoTime());
        try {
            PoolTask task = null;
            while (true) {
                if (task == null) {
                    task = scan(w);
                    if (task == null) {
                        w.flushCounts();
                        w.setCurrent(null);
                        task = awaitWork(w);
                        if (task == null) {
                            return;
                        }
                    }
                }
                task = runTask(w, task);
            }
        }
        finally {
            w.flushCounts();
            w.counters.becameIdle(System.nanoTime());
            w.setCurrent(null);
            if (liveWorkers.decrementAndGet() == 0) {
                terminated.countDown();
            }
        }
    }

    /** Runs a task and the chain of continuations it hands back. */
    private @Nullable PoolTask runTask(Worker w, PoolTask first) {
        PoolTask task = first;
        boolean continuation = false;
        while (task != null) {
            if (continuation && lane.size() != 0) {
                PoolTask urgent = lane.poll();
                if (urgent != null) {
                    w.push(task);
                    task = urgent;
                }
            }
            w.setCurrent(task);
            w.beforeTask();
            PoolTask next;
            try {
                next = task.execute(w);
            }
            catch (Throwable ex) {
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
        return null;
    }

    private @Nullable PoolTask scan(Worker w) {
        PoolTask t;
        if ((++w.scans & EXTERNAL_FAIRNESS_MASK) == 0 && (t = external.poll()) != null) {
            // Now and then the external queue goes first, so that a new run is not starved by
            // workers busy with the local work of a long one.
            w.pausedBetweenTasks();
            return t;
        }
        if (lane.size() != 0 && (t = lane.poll()) != null) {
            if (lane.size() != 0) {
                signalWork();
            }
            return t;
        }
        if ((t = w.deque.pop()) != null) {
            return t;
        }
        w.pausedBetweenTasks();
        if ((t = external.poll()) != null) {
            if (!external.isEmpty()) {
                signalWork();
            }
            return t;
        }
        return steal(w);
    }

    private @Nullable PoolTask steal(Worker w) {
        Worker[] ws = workers;
        int n = ws.length;
        if (n == 1) {
            return null;
        }
        int r = w.victimSeed;
        r ^= r << 13;
        r ^= r >>> 17;
        r ^= r << 5;
        w.victimSeed = r;
        int start = (r & Integer.MAX_VALUE) % n;
        for (int i = 0; i < n; i++) {
            Worker victim = ws[(start + i) % n];
            if (victim == w) {
                continue;
            }
            PoolTask t = victim.deque.steal();
            if (t != null) {
                w.counters.stole();
                if (!victim.deque.isEmpty()) {
                    signalWork();
                }
                return t;
            }
        }
        return null;
    }

    /** Spins, then parks; returns work found, or {@code null} when the worker should end. */
    private @Nullable PoolTask awaitWork(Worker w) {
        WorkerCounters counters = w.counters;
        counters.becameIdle(System.nanoTime());
        PoolTask t;
        for (int i = 0; i < spinsBeforePark; i++) {
            Thread.onSpinWait();
            if ((t = scan(w)) != null) {
                counters.becameActive(System.nanoTime());
                return t;
            }
            counters.idleSpin();
        }
        while (true) {
            pushIdle(w);
            if ((t = scan(w)) != null) {
                tryRemoveIdle(w);
                counters.becameActive(System.nanoTime());
                return t;
            }
            if (state != RUNNING) {
                tryRemoveIdle(w);
                return null;
            }
            counters.parked();
            // A stray interrupt (a task that interrupted itself) would make park return at once
            // and turn this loop into a spin; the pool uses unpark, never interrupts.
            Thread.interrupted();
            while (w.inIdleStack && state == RUNNING) {
                LockSupport.park(this);
            }
            if ((t = scan(w)) != null) {
                counters.becameActive(System.nanoTime());
                return t;
            }
        }
    }

    // ---------------------------------------------------------------- idle stack

    /** Wakes one idle worker, if any. Callers have just published work. */
    void signalWork() {
        // Pairs with the CAS in pushIdle: work published before this fence is seen by a worker
        // that registered as idle after it, or that worker is seen here.
        java.lang.invoke.VarHandle.fullFence();
        Worker w = popIdle();
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    private void pushIdle(Worker w) {
        if (w.inIdleStack) {
            return;
        }
        w.inIdleStack = true;
        while (true) {
            long c = idleStack.get();
            w.nextIdle = (int) (c & INDEX_MASK);
            long next = (((c >>> 16) + 1) << 16) | (w.index() + 1);
            if (idleStack.compareAndSet(c, next)) {
                return;
            }
        }
    }

    private @Nullable Worker popIdle() {
        while (true) {
            long c = idleStack.get();
            int top = (int) (c & INDEX_MASK);
            if (top == 0) {
                return null;
            }
            Worker w = workers[top - 1];
            long next = (((c >>> 16) + 1) << 16) | w.nextIdle;
            if (idleStack.compareAndSet(c, next)) {
                w.inIdleStack = false;
                return w;
            }
        }
    }

    /** Takes the worker off the idle stack when it is on top; otherwise a later pop wakes it spuriously. */
    private void tryRemoveIdle(Worker w) {
        long c = idleStack.get();
        if ((int) (c & INDEX_MASK) == w.index() + 1) {
            long next = (((c >>> 16) + 1) << 16) | w.nextIdle;
            if (idleStack.compareAndSet(c, next)) {
                w.inIdleStack = false;
            }
        }
    }

    private void reportTaskFailure(Worker w, Throwable ex) {
        try {
            taskFailureHandler.uncaughtException(w, ex);
        }
        catch (Throwable ignored) {
            // a failing handler must not end the worker
        }
    }

    /** Builds a {@link WorkStealingPool}. */
    public static final class Builder {

        private int threads = Runtime.getRuntime().availableProcessors();
        private String threadNamePrefix = "hts-worker-";
        private int spinsBeforePark = 256;
        private boolean daemon = true;
        private Thread.UncaughtExceptionHandler taskFailureHandler =
                (t, ex) -> log.error("A task threw on {}; the worker goes on", t.getName(), ex);

        private Builder() {
        }

        /**
         * The number of worker threads.
         *
         * @param threads from 1 to 65534
         * @return this builder
         */
        public Builder threads(int threads) {
            if (threads < 1 || threads > MAX_THREADS) {
                throw new IllegalArgumentException(
                        "threads must be between 1 and " + MAX_THREADS + ", was " + threads);
            }
            this.threads = threads;
            return this;
        }

        /**
         * The prefix of worker thread names, followed by the worker index.
         *
         * @param prefix the prefix, {@code hts-worker-} by default
         * @return this builder
         */
        public Builder threadNamePrefix(String prefix) {
            this.threadNamePrefix = Objects.requireNonNull(prefix, "prefix");
            return this;
        }

        /**
         * How many times an idle worker rescans the queues before it parks.
         *
         * @param spins 0 or more; 64 by default
         * @return this builder
         */
        public Builder spinsBeforePark(int spins) {
            if (spins < 0) {
                throw new IllegalArgumentException("spinsBeforePark must be 0 or more, was " + spins);
            }
            this.spinsBeforePark = spins;
            return this;
        }

        /**
         * Whether worker threads are daemon threads (they do not keep the JVM alive).
         *
         * @param daemon {@code true} by default
         * @return this builder
         */
        public Builder daemon(boolean daemon) {
            this.daemon = daemon;
            return this;
        }

        /**
         * Receives anything a task throws out of {@link PoolTask#execute}.
         *
         * @param handler the handler; by default the exception is logged
         * @return this builder
         */
        public Builder taskFailureHandler(Thread.UncaughtExceptionHandler handler) {
            this.taskFailureHandler = Objects.requireNonNull(handler, "handler");
            return this;
        }

        /** Starts the pool's threads. */
        public WorkStealingPool build() {
            return new WorkStealingPool(this);
        }
    }
}
