package io.hts.engine.support;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.ForwardingTaskContext;
import io.hts.engine.graph.GpuTaskContext;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test-only stand-in for the GPU backend: runs GPU bodies on its own threads (one per "stream")
 * and reports a scriptable load and health. Never part of the product. The test backends that
 * misbehave on purpose ({@link ScriptedBackend}, the stress tests' chaos backend) run a body the
 * way this one does, through {@link #runGpuBody}.
 */
public final class FakeGpuBackend implements DeviceBackend {

    private final int streams;
    private final ExecutorService executor;
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger nextLane = new AtomicInteger();
    private final ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
    private volatile DeviceHealth health = DeviceHealth.UP;
    private volatile String detail = "fake GPU";
    private volatile long backlogPerTaskNanos = 1_000_000;
    private volatile boolean closed;
    private volatile String closedOn;

    public FakeGpuBackend(int streams) {
        this.streams = streams;
        this.executor = Executors.newFixedThreadPool(streams, r -> {
            Thread t = new Thread(r, "fake-gpu-stream");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public Device device() {
        return Device.GPU;
    }

    @Override
    public String name() {
        return "fake:0";
    }

    @Override
    public DeviceStatus status() {
        int q = queued.get();
        int r = running.get();
        return new DeviceStatus(Device.GPU, health, streams, q, r, (q + r) * backlogPerTaskNanos, 1L << 30, detail);
    }

    @Override
    public void dispatch(DeviceTask task) {
        queued.incrementAndGet();
        executor.execute(() -> {
            queued.decrementAndGet();
            int lane = Math.floorMod(nextLane.getAndIncrement(), streams);
            if (!task.start(lane)) {
                return;
            }
            running.incrementAndGet();
            try {
                Object result = runGpuBody(task, this);
                ran.add(task.taskName());
                task.complete(result);
            } catch (Throwable ex) {
                task.fail(ex);
            } finally {
                running.decrementAndGet();
            }
        });
    }

    /**
     * Runs {@code task}'s GPU body as a test backend does: with a context that forwards to the
     * engine's task context, says device 0 and unwraps to {@code backend}.
     *
     * @return what the body returned
     * @throws Exception what the body threw
     */
    public static Object runGpuBody(DeviceTask task, DeviceBackend backend) throws Exception {
        return task.gpuBody().run(new Context(task.context(), backend));
    }

    public void setHealth(DeviceHealth health, String detail) {
        this.health = health;
        this.detail = detail;
    }

    public void setBacklogPerTask(long nanos) {
        this.backlogPerTaskNanos = nanos;
    }

    /** Names of the tasks whose GPU bodies ran, in completion order. */
    public List<String> ran() {
        return List.copyOf(ran);
    }

    public boolean isClosed() {
        return closed;
    }

    /** The name of the thread that closed this backend, or null while open. */
    public String closedOn() {
        return closedOn;
    }

    @Override
    public void close() {
        closedOn = Thread.currentThread().getName();
        closed = true;
        executor.shutdown();
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** The context GPU bodies get: forwards to the engine's task context. */
    private static final class Context extends ForwardingTaskContext implements GpuTaskContext {

        private final DeviceBackend backend;

        Context(TaskContext delegate, DeviceBackend backend) {
            super(delegate);
            this.backend = backend;
        }

        @Override
        public int deviceOrdinal() {
            return 0;
        }

        @Override
        public <C> C unwrap(Class<C> type) {
            if (type.isInstance(backend)) {
                return type.cast(backend);
            }
            throw new IllegalArgumentException("not a " + type.getName());
        }
    }
}
