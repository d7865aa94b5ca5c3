package io.hts.engine.run;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.internal.WorkStealingPool;
import io.hts.engine.exec.internal.Worker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The threads a {@link Scheduler} owns (its worker pool, its timer, its device backends') and
 * their end: which thread is one of them, stopping them once no run is left, waiting for them.
 */
final class SchedulerThreads {

    /*
     * The pool, the timer and the backends are final and started here; the scheduler's admission
     * calls shutdown() once, after the last run finished. timerThread is written by the timer's
     * thread factory, on the thread that first schedules (before the timer thread runs anything),
     * and read by close() on any thread: volatile, so a closer sees it once the timer ran.
     */

    private final WorkStealingPool pool;
    private final @Nullable DeviceBackend gpu;
    private final DeviceBackends backends;
    private final ScheduledThreadPoolExecutor timer;
    private final String threadNamePrefix;
    /** The timer's thread (time-outs, retries, their listeners), so that close() knows its own threads. */
    private volatile @Nullable Thread timerThread;

    SchedulerThreads(WorkStealingPool pool, @Nullable DeviceBackend gpu) {
        this.pool = pool;
        this.gpu = gpu;
        this.backends = new DeviceBackends(gpu == null ? List.of() : List.of(gpu));
        this.threadNamePrefix = pool.threadNamePrefix();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadNamePrefix + "timer");
            t.setDaemon(true);
            timerThread = t;
            return t;
        });
        this.timer.setRemoveOnCancelPolicy(true);
        this.timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    DeviceBackends backends() {
        return backends;
    }

    /** Whether the thread is a worker, the timer or the thread that drives the device. */
    boolean owns(Thread thread) {
        return (thread instanceof Worker w && w.pool() == pool)
                || thread == timerThread
                || gpu != null && gpu.isDeviceThread();
    }

    /** Lets queued work finish, then ends the threads; device backends close in the background. */
    void shutdown() {
        pool.shutdown();
        timer.shutdown();
        backends.closeInBackground(threadNamePrefix + "close-devices");
    }

    /**
     * Waits for every thread to end after {@link #shutdown()}.
     *
     * @param deadline on the {@link System#nanoTime()} clock
     * @return whether they ended in time
     * @throws InterruptedException when interrupted while waiting
     */
    boolean awaitTermination(long deadline) throws InterruptedException {
        return pool.awaitTermination(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))
                && timer.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
                && backends.awaitClosed(deadline - System.nanoTime());
    }

    /** Whether every thread has ended. */
    boolean isTerminated() {
        return pool.isTerminated() && timer.isTerminated() && backends.isClosed();
    }
}
