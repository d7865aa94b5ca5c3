package io.hts.engine.run;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.internal.WorkStealingPool;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.policy.SystemStatus;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A scheduler's device backends, as the scheduler addresses them all at once: their status beside
 * the CPU pool's (what the policy sees), telling them of a cancelled run, and closing them after the
 * last run.
 *
 * <p><b>Closing.</b> The thread that ends a scheduler's last run may be a backend's own (its
 * completion callback); a backend that joins its threads on close must not be closed from one of
 * them. So a thread of its own closes them, once ({@link #closeInBackground} is called once, by
 * the admission's drain), and {@link #awaitClosed} waits for it. Nothing a backend throws escapes.
 */
final class DeviceBackends {

    private static final Logger log = LoggerFactory.getLogger(DeviceBackends.class);

    private final List<DeviceBackend> backends;
    private final CountDownLatch closed = new CountDownLatch(1);

    DeviceBackends(List<DeviceBackend> backends) {
        this.backends = List.copyOf(backends);
    }

    /**
     * The load and health of the CPU pool and of the GPU backend, if any. Never throws: a backend
     * whose status throws or is null is reported DOWN with the reason (placement asks this).
     */
    SystemStatus systemStatus(WorkStealingPool pool) {
        @Nullable DeviceBackend gpu = backends.isEmpty() ? null : backends.get(0);
        int queued = pool.queuedTasks();
        DeviceStatus cpu = new DeviceStatus(
                Device.CPU,
                pool.isShutdown() ? DeviceHealth.DOWN : DeviceHealth.UP,
                pool.parallelism(),
                queued,
                pool.activeWorkers(),
                queued * pool.meanTaskNanos(),
                -1,
                "work-stealing pool, " + pool.parallelism() + " workers");
        if (gpu == null) {
            return SystemStatus.of(cpu);
        }
        DeviceStatus g;
        try {
            g = gpu.status();
            if (g == null) {
                g = new DeviceStatus(
                        Device.GPU, DeviceHealth.DOWN, 0, 0, 0, 0, -1, gpu.name() + ".status() returned null");
            }
        } catch (Throwable ex) { // an Error too (a broken native binding): placement, which asks this, must never throw
            g = new DeviceStatus(Device.GPU, DeviceHealth.DOWN, 0, 0, 0, 0, -1, "status failed: " + ex);
        }
        return SystemStatus.of(cpu, g);
    }

    /** A run was cancelled: its tasks queued on device backends may be dropped early. */
    void runCancelled(long runId) {
        for (DeviceBackend b : backends) {
            try {
                b.onRunCancelled(runId);
            } catch (Throwable ex) {
                log.warn(
                        "The {} backend '{}' failed to drop the tasks of cancelled run {}",
                        b.device().id(),
                        b.name(),
                        runId,
                        ex);
            }
        }
    }

    /** Closes every backend on a thread of its own named {@code threadName}. */
    void closeInBackground(String threadName) {
        if (backends.isEmpty()) {
            closed.countDown();
            return;
        }
        Thread closer = new Thread(this::closeAll, threadName);
        closer.setDaemon(true);
        closer.start();
    }

    private void closeAll() {
        try {
            for (DeviceBackend b : backends) {
                try {
                    b.close();
                } catch (Throwable ex) {
                    log.warn("Closing the {} backend '{}' failed", b.device().id(), b.name(), ex);
                }
            }
        } finally {
            closed.countDown();
        }
    }

    boolean awaitClosed(long nanos) throws InterruptedException {
        return closed.await(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    }

    boolean isClosed() {
        return closed.getCount() == 0;
    }
}
