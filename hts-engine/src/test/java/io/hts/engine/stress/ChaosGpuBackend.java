package io.hts.engine.stress;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.support.FakeGpuBackend;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A device backend that misbehaves the ways real ones do, at random: it runs a queued task, or
 * drops it after {@code start} returned false, or fails it without starting it (a device that went
 * down draining its queue), or hands it back to the CPU, or starts it and then fails it, or reports
 * twice. The engine must end every task once whatever it does. Not a {@code ScriptedBackend}: it
 * keeps one queue served by one thread of its own, so that a seed decides every choice, and it
 * drains that queue when closed, so that every task it took still gets its outcome; it runs a
 * body as {@link FakeGpuBackend} does.
 */
final class ChaosGpuBackend implements DeviceBackend {

    private final LinkedBlockingQueue<DeviceTask> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicLong seed;
    private final ConcurrentLinkedQueue<Throwable> engineErrors = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    ChaosGpuBackend(long seed) {
        this.seed = new AtomicLong(seed);
        this.thread = new Thread(this::serve, "hts-stress-chaos-gpu");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    @Override
    public Device device() {
        return Device.GPU;
    }

    @Override
    public String name() {
        return "chaos:0";
    }

    @Override
    public DeviceStatus status() {
        return new DeviceStatus(Device.GPU, DeviceHealth.UP, 2, queued.get(), 0, 0, 1L << 30, "chaos");
    }

    @Override
    public void dispatch(DeviceTask task) {
        queued.incrementAndGet();
        queue.add(task);
    }

    private void serve() {
        SplittableRandom random = new SplittableRandom(seed.get());
        while (!closed || !queue.isEmpty()) {
            DeviceTask task;
            try {
                task = queue.poll(10, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ex) {
                continue;
            }
            if (task == null) {
                continue;
            }
            queued.decrementAndGet();
            try {
                handle(task, random.nextInt(100));
            } catch (Throwable ex) {
                engineErrors.add(ex); // the engine threw into its backend: a bug the test reports
            }
        }
    }

    private void handle(DeviceTask task, int roll) {
        if (roll < 8) {
            task.fail(new IllegalStateException("chaos: device down, queue drained"));
            task.fail(new IllegalStateException("chaos: drained twice"));
        } else if (roll < 14) {
            if (!task.fallBackToCpu("chaos: device down")) {
                task.fail(new IllegalStateException("chaos: no CPU body to fall back to"));
            }
        } else if (!task.start(0)) {
            if (roll < 20) {
                task.fail(new IllegalStateException("chaos: reported a task it was told to drop"));
            }
        } else if (roll < 26) {
            task.fail(new IllegalStateException("chaos: kernel failed"));
        } else {
            Object result;
            try {
                result = FakeGpuBackend.runGpuBody(task, this);
            } catch (Throwable ex) {
                task.fail(ex);
                return;
            }
            task.complete(result);
            if (roll > 95) {
                task.complete(result); // a second report must not count
            }
        }
    }

    /** What the engine threw out of a {@code DeviceTask} call, which it must never do. */
    List<Throwable> engineErrors() {
        return List.copyOf(engineErrors);
    }

    @Override
    public void close() {
        closed = true;
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
