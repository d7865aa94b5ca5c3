package io.hts.engine.exec.internal;

import io.hts.engine.exec.PoolStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTS's CPU executor: a fixed set of worker threads that balance load by work stealing.
 *
 * <p>This class deliberately does not implement {@link java.util.concurrent.Executor}: Spring
 * Boot's own task executor backs off when an {@code Executor} bean exists.
 */
public final class WorkStealingPool implements AutoCloseable {

    /*
     * Implementation overview.
     *
     * Queues. Each {@link Worker} owns a Chase-Lev {@link WorkStealingDeque}. Work created by
     * a worker (the successors a finished task makes ready) goes to the bottom of its own deque and is
     * popped from there again, LIFO, which keeps data warm in that core's cache; no other thread
     * touches the bottom, so the common path has no lock and no CAS. Work submitted from outside the
     * pool (a graph's roots, completions delivered by the GPU backend or the retry timer) goes to a
     * lock-free shared queue. Urgent work goes to the {@link PriorityLane}, a small heap every worker
     * checks first (one volatile read when it is empty).
     *
     * Finding work. A worker looks, in order: the priority lane; its own deque; the shared
     * queue (every 64th scan looks there before its own deque, so shared work is never starved by a
     * busy deque); then the deques of the other workers, starting at a random victim (xorshift) and
     * trying each once, stealing from the top. A task may return a continuation, which the worker runs
     * next without queueing it (a chain of dependent tasks runs as a loop on one thread); before
     * running it the worker takes queued urgent work first. Priority guarantee: whenever a
     * worker picks its next task, a task queued in the priority lane is taken before any normal task;
     * so once urgent tasks are queued, at most one normal task per other worker (picked in the same
     * instant) is picked before the last of them. (Picked, not started: the worker that picked the
     * last urgent task may be descheduled before running it while the others go on.)
     *
     * Idling follows {@link IdleWorkers}: spin for a bounded number of rescans, then queue
     * on the idle stack, rescan once, and park; producers publish, fence and signal. No wake-up is
     * lost and none lands on a busy worker while another is parked; an idle pool uses no CPU. To keep
     * wake-ups (a futex call each) rare, a producer signals only when its push takes a deque from
     * empty to non-empty, for every shared or urgent submission, and a successful thief that sees more
     * work left signals one more worker, like {@code ForkJoinPool}'s signal propagation.
     *
     * Waiting inside a task. {@link #helpUntil} lets a task body wait (for a nested run) on
     * its worker without taking the worker from the pool: the worker runs other ready tasks meanwhile,
     * and when none is ready it waits as an idle worker does, woken by new work or by the end of the
     * wait. Nested waits nest on the worker's stack; past {@value Worker#MAX_HELP_DEPTH} levels the
     * worker blocks instead, and a spare worker runs in its place until the wait is over.
     *
     * Batched counts. A worker adds to shared counters (a run's finished tasks) in local
     * batches, flushed when full, before work of another counter, before a wait and before idling.
     *
     * Shutdown. {@link #shutdown()} rejects further submissions from threads outside the
     * pool, lets workers finish everything queued (including what running tasks create) and then lets
     * them exit. A submission racing the shutdown either is rejected or runs: a submitter offers its
     * task and then reads the state, withdrawing the task and throwing when the pool shut down
     * meanwhile; a worker exits only after a scan that followed its reading of the shut-down state.
     */

    private static final Logger log = LoggerFactory.getLogger(WorkStealingPool.class);

    private static final int RUNNING = 0;
    private static final int SHUTDOWN = 1;

    private final Worker[] workers;
    private final IdleWorkers idle;
    private final PriorityLane lane = new PriorityLane();
    private final ConcurrentLinkedQueue<PoolTask> shared = new ConcurrentLinkedQueue<>();
    private final WorkerLoop loop;
    private final AtomicInteger liveWorkers;
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final String threadNamePrefix;
    final Thread.UncaughtExceptionHandler taskFailureHandler;
    private volatile int state = RUNNING;

    private WorkStealingPool(Builder builder) {
        int threads = builder.threads;
        this.taskFailureHandler = builder.taskFailureHandler;
        this.threadNamePrefix = builder.threadNamePrefix;
        this.workers = new Worker[threads];
        IdleWorkers.Slot[] slots = new IdleWorkers.Slot[threads];
        this.liveWorkers = new AtomicInteger(threads);
        for (int i = 0; i < threads; i++) {
            slots[i] = new IdleWorkers.Slot(i);
            workers[i] = new Worker(this, i, threadNamePrefix + i, slots[i], false);
            slots[i].thread = workers[i];
        }
        this.idle = new IdleWorkers(slots);
        this.loop = new WorkerLoop(this, workers, idle, lane, shared, builder.spinsBeforePark);
        for (Worker w : workers) {
            w.start();
        }
    }

    /** The prefix of the workers' thread names (a worker's name is the prefix and its index). */
    public String threadNamePrefix() {
        return threadNamePrefix;
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
     * otherwise to the shared queue.
     *
     * @param task the task
     * @throws RejectedExecutionException when the pool has been shut down and the caller is not
     *     one of its workers (the task then never runs)
     */
    public void submit(PoolTask task) {
        Worker w = currentWorker();
        if (w != null) {
            w.push(task);
            return;
        }
        submitShared(task, false);
    }

    /** Offers to the shared queue; from outside the pool, rejected (and withdrawn) once shut down. */
    void submitShared(PoolTask task, boolean fromPool) {
        if (!fromPool && state != RUNNING) {
            throw rejected();
        }
        shared.offer(task);
        if (!fromPool && state != RUNNING && shared.remove(task)) {
            throw rejected(); // the shutdown landed after our check: withdrawn before any worker took it
        }
        signalWork();
    }

    /**
     * Submits a task to the priority lane, which every worker checks before anything else.
     *
     * @param task the task
     * @param priority higher runs first
     * @param cost estimated cost in nanoseconds; among equal priorities the cheaper runs first
     * @throws RejectedExecutionException when the pool has been shut down and the caller is not
     *     one of its workers
     */
    public void submitPriority(PoolTask task, int priority, long cost) {
        boolean fromPool = currentWorker() != null;
        if (!fromPool && state != RUNNING) {
            throw rejected();
        }
        lane.add(task, priority, cost);
        if (!fromPool && state != RUNNING && lane.remove(task)) {
            throw rejected();
        }
        signalWork();
    }

    private static RejectedExecutionException rejected() {
        return new RejectedExecutionException("the HTS worker pool has been shut down");
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

    /**
     * Runs queued tasks on the calling worker until {@code done} holds or the deadline passes: a
     * task body waits this way without taking its worker from the pool. When no task is ready the
     * worker waits as an idle one does; whoever makes {@code done} true must unpark the worker.
     * {@code done} is evaluated on the worker after each task and each wake-up. Past
     * {@value Worker#MAX_HELP_DEPTH} nested waits the worker blocks, and a spare worker runs in its
     * place meanwhile.
     *
     * @param w the calling worker
     * @param done when to stop waiting
     * @param deadlineNanos a {@link System#nanoTime()} deadline, {@code Long.MAX_VALUE} for none
     */
    public void helpUntil(Worker w, BooleanSupplier done, long deadlineNanos) {
        if (w != Thread.currentThread() || w.pool() != this) {
            throw new IllegalArgumentException(w.getName() + " is not the calling worker of this pool");
        }
        loop.helpUntil(w, done, deadlineNanos);
    }

    void runWorker(Worker w) {
        loop.run(w);
    }

    /** The number of worker threads. */
    public int parallelism() {
        return workers.length;
    }

    /**
     * Calls the action for every task a worker is running at this moment, or has just finished
     * (a worker forgets its last task when it starts the next or goes idle), and for every task
     * whose body waits in {@link #helpUntil}; callers check the task's own state.
     *
     * @param action called once per task, on the calling thread
     */
    public void forEachRunning(Consumer<PoolTask> action) {
        for (Worker w : workers) {
            w.forEachRunning(action);
        }
        for (Worker w : loop.spares) {
            w.forEachRunning(action);
        }
    }

    /** Tasks queued anywhere in the pool, an estimate. */
    public int queuedTasks() {
        long n = lane.size() + (long) shared.size();
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
            list.add(new PoolStats.WorkerStats(
                    w.index(),
                    w.getName(),
                    c.executedCount(),
                    c.stealCount(),
                    c.idleSpinCount(),
                    c.parkCount(),
                    c.busyNanos(now),
                    w.deque.size(),
                    c.isActive(),
                    w.getState()));
        }
        return new PoolStats(workers.length, list, lane.size(), shared.size(), isShutdown(), isTerminated());
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
        state = SHUTDOWN;
        idle.signalAll();
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
            } catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** A regular worker's thread ends. */
    void workerEnded() {
        if (liveWorkers.decrementAndGet() == 0) {
            terminated.countDown();
        }
    }

    /** Wakes one idle worker, if any. Callers have just published work. */
    void signalWork() {
        idle.signal();
    }

    /** Builds a {@link WorkStealingPool}. */
    public static final class Builder {

        private int threads = Runtime.getRuntime().availableProcessors();
        private String threadNamePrefix = "hts-worker-";
        private int spinsBeforePark = 256;
        private Thread.UncaughtExceptionHandler taskFailureHandler =
                (t, ex) -> log.error("A task threw on {}; the worker goes on", t.getName(), ex);

        private Builder() {}

        /**
         * The number of worker threads.
         *
         * @param threads from 1 to 65534
         * @return this builder
         */
        public Builder threads(int threads) {
            if (threads < 1 || threads > IdleWorkers.MAX_SLOTS) {
                throw new IllegalArgumentException(
                        "threads must be between 1 and " + IdleWorkers.MAX_SLOTS + ", was " + threads);
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
         * @param spins 0 or more; 256 by default
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
