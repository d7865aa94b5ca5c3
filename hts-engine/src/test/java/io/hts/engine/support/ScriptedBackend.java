package io.hts.engine.support;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * A device backend whose behaviour per task is a script, run on its own thread(s) (or inline, on
 * the dispatching thread): for tests of how the engine copes with a backend that misbehaves on
 * purpose (reports twice, reports what it was told to drop, throws from status or close, never
 * runs a task). A well-behaved script is {@link #runAndReport}; for a backend that simply runs
 * GPU bodies use {@link FakeGpuBackend}, whose way of running a body this one shares.
 */
public class ScriptedBackend implements DeviceBackend {

    public final ExecutorService executor;
    /** What the engine threw at this backend from a report ({@link #complete}, {@link #fail}, {@link #reporting}). */
    public final ConcurrentLinkedQueue<Throwable> reportErrors = new ConcurrentLinkedQueue<>();
    /** Every task dispatched to this backend, in order; a script that does nothing leaves them here. */
    public final ConcurrentLinkedQueue<DeviceTask> dispatched = new ConcurrentLinkedQueue<>();

    public volatile BiConsumer<ScriptedBackend, DeviceTask> script;
    /** Whether the script runs on the dispatching thread instead of this backend's own. */
    public volatile boolean inline;
    /** The health {@link #status} reports. */
    public volatile DeviceHealth health = DeviceHealth.UP;

    public volatile RuntimeException statusFailure;
    public volatile RuntimeException closeFailure;
    public volatile RuntimeException cancelFailure;

    public ScriptedBackend(int threads, BiConsumer<ScriptedBackend, DeviceTask> script) {
        this.script = script;
        this.executor = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "scripted-gpu");
            t.setDaemon(true);
            return t;
        });
    }

    /** A backend that behaves: {@link #runAndReport} on each task, on two threads of its own. */
    public static ScriptedBackend wellBehaved() {
        return new ScriptedBackend(2, ScriptedBackend::runAndReport);
    }

    /** The well-behaved script: starts the task and, if it may run, reports what its body gave. */
    public static void runAndReport(ScriptedBackend b, DeviceTask task) {
        if (task.start(0)) {
            b.report(task, runBody(b, task));
        }
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
        return new DeviceStatus(Device.GPU, health, 4, 0, 0, 0, 1L << 30, "scripted");
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

    /** Runs the body as a well-behaved backend would, returning its outcome (result or {@link Failure}). */
    public static Object runBody(ScriptedBackend b, DeviceTask task) {
        try {
            return FakeGpuBackend.runGpuBody(task, b);
        } catch (Throwable ex) {
            return new Failure(ex);
        }
    }

    /** A body's outcome that is a throwable. */
    public record Failure(Throwable error) {}

    /** Makes a report by hand; what the engine throws from it is kept in {@link #reportErrors}. */
    public void reporting(Runnable report) {
        try {
            report.run();
        } catch (Throwable ex) {
            reportErrors.add(ex);
        }
    }

    public void complete(DeviceTask task, Object result) {
        reporting(() -> task.complete(result));
    }

    public void fail(DeviceTask task, Throwable error) {
        reporting(() -> task.fail(error));
    }

    /** Reports the outcome {@link #runBody} gave. */
    public void report(DeviceTask task, Object outcome) {
        if (outcome instanceof Failure f) {
            fail(task, f.error());
        } else {
            complete(task, outcome);
        }
    }
}
