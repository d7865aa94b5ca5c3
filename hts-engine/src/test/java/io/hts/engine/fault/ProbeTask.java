package io.hts.engine.fault;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.TaskContext;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A device task as the engine hands one to a backend, that records how it ended: run by the device
 * ({@link #complete}), failed ({@link #fail}, started or not) or handed back to the CPU
 * ({@link #fallBackToCpu}, only with a CPU body). It keeps the engine's rules: {@link #start} and
 * the hand-back exclude each other (one compare-and-set), and it counts every report after the
 * first as a broken contract ({@link #extraEnds}).
 */
final class ProbeTask implements DeviceTask {

    static final int PENDING = 0;
    static final int RAN = 1;
    static final int FAILED = 2;
    static final int HANDED_BACK = 3;

    private static final int NEW = 0;
    private static final int STARTED = 1;
    private static final int MOVED = 2;

    private final String name;
    private final long runId;
    private final boolean cpuBody;
    private final @Nullable AtomicBoolean runCancelled;
    private final AtomicInteger launch = new AtomicInteger(NEW);
    private final AtomicInteger end = new AtomicInteger(PENDING);
    private final AtomicInteger extraEnds = new AtomicInteger();
    private final CountDownLatch ended = new CountDownLatch(1);

    /**
     * @param runCancelled the run's cancellation flag, or {@code null} for a run never cancelled
     */
    ProbeTask(String name, long runId, boolean cpuBody, @Nullable AtomicBoolean runCancelled) {
        this.name = name;
        this.runId = runId;
        this.cpuBody = cpuBody;
        this.runCancelled = runCancelled;
    }

    /** How it ended: {@link #PENDING} (not yet), {@link #RAN}, {@link #FAILED} or {@link #HANDED_BACK}. */
    int end() {
        return end.get();
    }

    /** Counted down at its first end. */
    CountDownLatch ended() {
        return ended;
    }

    /** Reports after the first end (a backend that ended it twice). */
    int extraEnds() {
        return extraEnds.get();
    }

    boolean hasCpuBody() {
        return cpuBody;
    }

    private void ends(int how) {
        if (end.compareAndSet(PENDING, how)) {
            ended.countDown();
        } else {
            extraEnds.incrementAndGet();
        }
    }

    @Override
    public String taskName() {
        return name;
    }

    @Override
    public long runId() {
        return runId;
    }

    @Override
    public int attempt() {
        return 1;
    }

    @Override
    public GpuBody<?> gpuBody() {
        return ctx -> name;
    }

    @Override
    public TaskContext context() {
        throw new UnsupportedOperationException("a probe has no task context");
    }

    @Override
    public long deadlineNanos() {
        return Long.MAX_VALUE;
    }

    @Override
    public boolean isCancelled() {
        AtomicBoolean c = runCancelled;
        return c != null && c.get();
    }

    @Override
    public boolean start(int lane) {
        return launch.compareAndSet(NEW, STARTED);
    }

    @Override
    public boolean fallBackToCpu(String reason) {
        if (!cpuBody || !launch.compareAndSet(NEW, MOVED)) {
            return false;
        }
        ends(HANDED_BACK);
        return true;
    }

    @Override
    public void complete(@Nullable Object result) {
        ends(RAN);
    }

    @Override
    public void fail(Throwable error) {
        ends(FAILED);
    }

    @Override
    public String toString() {
        return name + (cpuBody ? " (dual)" : " (GPU-only)") + " of run " + runId + ", end "
                + new String[] {"PENDING", "RAN", "FAILED", "HANDED_BACK"}[end.get()];
    }
}
