package io.hts.engine.adversarial;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.ForwardingTaskContext;
import io.hts.engine.graph.GpuTaskContext;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/** A device backend whose behaviour per task is a script; runs scripts on its own thread(s). */
class ScriptedBackend implements DeviceBackend {

    final ExecutorService executor;
    final ConcurrentLinkedQueue<Throwable> reportErrors = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<DeviceTask> dispatched = new ConcurrentLinkedQueue<>();
    volatile BiConsumer<ScriptedBackend, DeviceTask> script;
    volatile boolean inline;
    volatile RuntimeException statusFailure;
    volatile RuntimeException closeFailure;
    volatile RuntimeException cancelFailure;

    ScriptedBackend(int threads, BiConsumer<ScriptedBackend, DeviceTask> script) {
        this.script = script;
        this.executor = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "scripted-gpu");
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
        return "scripted:0";
    }

    @Override
    public DeviceStatus status() {
        RuntimeException f = statusFailure;
        if (f != null) {
            throw f;
        }
        return new DeviceStatus(Device.GPU, DeviceHealth.UP, 4, 0, 0, 0, 1L << 30, "scripted");
    }

    @Override
    public void dispatch(DeviceTask task) {
        dispatched.add(task);
        if (inline) {
            script.accept(this, task);
            return;
        }
        executor.execute(() -> script.accept(this, task));
    }

    @Override
    public void onRunCancelled(long runId) {
        RuntimeException f = cancelFailure;
        if (f != null) {
            throw f;
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        RuntimeException f = closeFailure;
        if (f != null) {
            throw f;
        }
    }

    /** Runs the body as a well-behaved backend would, returning its outcome (result or Throwable). */
    static Object runBody(ScriptedBackend b, DeviceTask task) {
        try {
            return task.gpuBody().run(new Ctx(task.context()));
        } catch (Throwable ex) {
            return new Failure(ex);
        }
    }

    record Failure(Throwable error) {}

    void complete(DeviceTask task, Object result) {
        try {
            task.complete(result);
        } catch (Throwable ex) {
            reportErrors.add(ex);
        }
    }

    void fail(DeviceTask task, Throwable error) {
        try {
            task.fail(error);
        } catch (Throwable ex) {
            reportErrors.add(ex);
        }
    }

    void report(DeviceTask task, Object outcome) {
        if (outcome instanceof Failure f) {
            fail(task, f.error());
        } else {
            complete(task, outcome);
        }
    }

    static final class Ctx extends ForwardingTaskContext implements GpuTaskContext {
        Ctx(TaskContext delegate) {
            super(delegate);
        }

        @Override
        public int deviceOrdinal() {
            return 0;
        }

        @Override
        public <C> C unwrap(Class<C> type) {
            throw new IllegalArgumentException("not a " + type.getName());
        }
    }
}
