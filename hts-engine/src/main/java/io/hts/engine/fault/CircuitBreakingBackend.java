package io.hts.engine.fault;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GpuBody;
import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A device backend behind a Resilience4j {@link CircuitBreaker} (and, optionally, a
 * {@link Bulkhead}): every task the device runs is a call of the breaker, its failure or success
 * recorded when the device reports it.
 *
 * <p><b>Invariants.</b> (1) Every task dispatched here is, at each moment, either held here (in
 * {@link WaitingTasks}, whose invariants say who owns it and when) or passed on: to the device
 * (holding a breaker permission, and a bulkhead permission when there is a bulkhead), to the CPU, or
 * failed. (2) A closed backend fails or hands back every task it holds: {@link #close} closes the
 * waiting tasks by one compare-and-set, and only its winner fails what waits and closes the device;
 * a task being tried at that moment is failed by the thread trying it, or has gone on to the device,
 * which refuses it once closed. (3) The permissions of a task passed to the device go back exactly
 * once, with its first report or its withdrawal ({@code Guarded}'s compare-and-set), and the waiting
 * tasks are drained after.
 *
 * <p><b>Memory ordering.</b> The fields of this class are final; what threads share is in atomics
 * and concurrent collections (the waiting tasks, the dispatched wrappers) or in the thread-safe
 * breaker and bulkhead, so every access to it is a volatile one. How the waiting tasks order a close
 * against a drain is in {@link WaitingTasks}.
 *
 * <p>While the breaker is open, a task with a CPU body runs on the CPU; a GPU-only task fails at
 * once with the breaker's {@link CallNotPermittedException} ({@link WhenOpen#FAIL}, the device
 * reported DOWN) or waits until the breaker lets calls through again ({@link WhenOpen#WAIT}, the
 * device reported DEGRADED). A bulkhead caps the tasks on the device at once; tasks beyond it wait
 * here, not on a CPU thread. Cancelled tasks count neither way.
 *
 * <p>Waiting tasks are tried again whenever a task completes, the breaker changes state, or (while
 * any wait) every {@code recheck} on the JDK's shared delayed executor, so an open breaker whose
 * wait has elapsed lets them through even when nothing else happens.
 */
public final class CircuitBreakingBackend implements DeviceBackend {

    private static final Logger log = LoggerFactory.getLogger(CircuitBreakingBackend.class);

    /** What a task without a CPU body does while the breaker is open. */
    public enum WhenOpen {
        /** Wait until the breaker lets calls through again. */
        WAIT,
        /** Fail with the breaker's {@code CallNotPermittedException}. */
        FAIL
    }

    private final DeviceBackend delegate;
    private final CircuitBreaker breaker;
    private final @Nullable Bulkhead bulkhead;
    private final WhenOpen whenOpen;
    /** Every task passes through here in dispatch order; one thread at a time moves them on. */
    private final WaitingTasks waiting = new WaitingTasks(new Routing());

    /** The wrappers of dispatched tasks, so the device finds a successor's predecessors by the objects it saw. */
    private final ConcurrentHashMap<DeviceTask, Guarded> dispatched = new ConcurrentHashMap<>();

    /**
     * Guards a backend.
     *
     * @param delegate the device's backend
     * @param breaker the breaker (e.g. the {@code hts-gpu} instance of the application's registry)
     * @param bulkhead a cap on concurrent tasks, or {@code null} for the device's own (its streams)
     * @param whenOpen what GPU-only tasks do while the breaker is open
     */
    public CircuitBreakingBackend(
            DeviceBackend delegate, CircuitBreaker breaker, @Nullable Bulkhead bulkhead, WhenOpen whenOpen) {
        this.delegate = delegate;
        this.breaker = breaker;
        this.bulkhead = bulkhead;
        this.whenOpen = whenOpen;
        breaker.getEventPublisher().onStateTransition(event -> waiting.drain());
    }

    /** The guarded backend. */
    public DeviceBackend delegate() {
        return delegate;
    }

    /** The breaker. */
    public CircuitBreaker circuitBreaker() {
        return breaker;
    }

    /** The bulkhead, if there is one. */
    public Optional<Bulkhead> bulkhead() {
        return Optional.ofNullable(bulkhead);
    }

    /** What GPU-only tasks do while the breaker is open. */
    public WhenOpen whenOpen() {
        return whenOpen;
    }

    /** Tasks waiting for the breaker or the bulkhead. */
    public int waiting() {
        return waiting.size();
    }

    @Override
    public Device device() {
        return delegate.device();
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public DeviceStatus status() {
        DeviceStatus s = delegate.status();
        CircuitBreaker.State state = breaker.getState();
        DeviceHealth health = s.health();
        String detail = s.detail();
        if (state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN) {
            if (health != DeviceHealth.DOWN) {
                health = whenOpen == WhenOpen.FAIL ? DeviceHealth.DOWN : DeviceHealth.DEGRADED;
            }
            detail = "circuit breaker '" + breaker.getName() + "' is " + state + " (failure rate "
                    + breaker.getMetrics().getFailureRate() + " %); " + detail;
        } else if (state == CircuitBreaker.State.HALF_OPEN && health == DeviceHealth.UP) {
            health = DeviceHealth.DEGRADED;
            detail = "circuit breaker '" + breaker.getName() + "' is HALF_OPEN; " + detail;
        }
        return new DeviceStatus(
                s.device(),
                health,
                s.capacity(),
                s.queued() + waiting(),
                s.running(),
                s.backlogNanos(),
                s.freeMemoryBytes(),
                detail);
    }

    @Override
    public List<DeviceStatus> deviceStatuses() {
        return delegate.deviceStatuses();
    }

    @Override
    public void dispatch(DeviceTask task) {
        waiting.add(task);
    }

    /** How the drainer of the waiting tasks moves one on, and why it fails one. */
    private final class Routing implements WaitingTasks.Router {

        /** Dispatches a task if the breaker and the bulkhead allow it, or routes it; false: it must wait. */
        @Override
        public boolean route(DeviceTask task) {
            if (!breaker.tryAcquirePermission()) {
                String reason = "circuit breaker '" + breaker.getName() + "' of " + delegate.name() + " is "
                        + breaker.getState();
                if (task.fallBackToCpu(reason)) {
                    return true;
                }
                if (whenOpen == WhenOpen.FAIL) {
                    task.fail(CallNotPermittedException.createCallNotPermittedException(breaker));
                    return true;
                }
                return false;
            }
            if (bulkhead != null && !bulkhead.tryAcquirePermission()) {
                breaker.releasePermission();
                return false;
            }
            send(task, false);
            return true;
        }

        @Override
        public Throwable closedWhileWaiting(DeviceTask task) {
            return new TaskCancelledException("the scheduler closed while task '" + task.taskName() + "' waited for"
                    + " circuit breaker '" + breaker.getName() + "'");
        }

        @Override
        public Throwable cancelledWhileWaiting(DeviceTask task) {
            return new TaskCancelledException("task '" + task.taskName() + "' of run " + task.runId()
                    + " was cancelled while it waited for circuit breaker '" + breaker.getName() + "' of "
                    + delegate.name());
        }
    }

    /**
     * Passes a task that holds its permits to the device: offered to launch on this thread first
     * when {@code here}, else (or when the device declines) dispatched.
     */
    private void send(DeviceTask task, boolean here) {
        Guarded g = new Guarded(task, breaker.getCurrentTimestamp());
        dispatched.put(task, g);
        try {
            if (!here || !delegate.dispatchHere(g)) {
                delegate.dispatch(g);
            }
        } catch (Throwable ex) {
            // A backend must not throw; if it does, the task fails as if reported so (the engine ends it
            // once, started or not), and its permits go back.
            g.fail(ex);
        }
    }

    /**
     * Offers the device a task to launch on the caller's thread when nothing waits before it and
     * the breaker and the bulkhead let it through at once; anything else goes the way of
     * {@link #dispatch} (declined here).
     */
    @Override
    public boolean dispatchHere(DeviceTask task) {
        if (waiting.isClosed() || task.isCancelled() || !waiting.isEmpty() || !breaker.tryAcquirePermission()) {
            return false;
        }
        if (bulkhead != null && !bulkhead.tryAcquirePermission()) {
            breaker.releasePermission();
            return false;
        }
        send(task, true);
        return true;
    }

    @Override
    public boolean assist() {
        return delegate.assist();
    }

    @Override
    public boolean isDeviceThread() {
        return delegate.isDeviceThread();
    }

    @Override
    public void onRunCancelled(long runId) {
        waiting.cancelRun(runId);
        delegate.onRunCancelled(runId);
    }

    /**
     * Fails every task waiting here (one being tried now is failed by the thread trying it, or goes
     * on to the device), then closes the device. Only the first call does anything.
     */
    @Override
    public void close() {
        if (waiting.close()) {
            delegate.close();
        }
    }

    @Override
    public String toString() {
        return delegate.name() + " behind circuit breaker '" + breaker.getName() + "' (" + breaker.getState() + ")";
    }

    private void bookkeepingFailed(String what, Throwable ex) {
        try {
            log.warn(
                    "{} circuit breaker '{}' threw {}; the task's report goes on to the scheduler",
                    what,
                    breaker.getName(),
                    ex.getClass().getName(),
                    ex);
        } catch (Throwable ignored) {
            // a throwable whose printing throws: the report still goes on
        }
    }

    /** A task whose outcome is recorded on the breaker and frees its bulkhead permission. */
    private final class Guarded implements DeviceTask {

        private final DeviceTask task;
        private final long start;
        private final AtomicBoolean ended = new AtomicBoolean();

        Guarded(DeviceTask task, long start) {
            this.task = task;
            this.start = start;
        }

        /**
         * Records the outcome on the breaker and frees the bulkhead's permission. Nothing here may keep
         * the report from the engine (the caller forwards it afterwards): the breaker runs the user's
         * exception predicates and event consumers, and draining dispatches to the backend; what they
         * throw is logged.
         */
        private void ended(@Nullable Throwable error) {
            if (!ended.compareAndSet(false, true)) {
                return; // a second report: the permits went back with the first
            }
            dispatched.remove(task);
            try {
                long duration = breaker.getCurrentTimestamp() - start;
                if (error == null) {
                    breaker.onSuccess(duration, breaker.getTimestampUnit());
                } else if (task.isCancelled() || error instanceof TaskCancelledException) {
                    breaker.releasePermission();
                } else {
                    breaker.onError(duration, breaker.getTimestampUnit(), error);
                }
            } catch (Throwable ex) {
                bookkeepingFailed("recording an outcome on", ex);
            }
            try {
                if (bulkhead != null) {
                    bulkhead.onComplete();
                }
                waiting.drain();
            } catch (Throwable ex) {
                bookkeepingFailed("freeing a permission of", ex);
            }
        }

        @Override
        public String taskName() {
            return task.taskName();
        }

        @Override
        public long runId() {
            return task.runId();
        }

        @Override
        public int attempt() {
            return task.attempt();
        }

        @Override
        public GpuBody<?> gpuBody() {
            return task.gpuBody();
        }

        @Override
        public TaskContext context() {
            return task.context();
        }

        @Override
        public long deadlineNanos() {
            return task.deadlineNanos();
        }

        @Override
        public boolean isCancelled() {
            return task.isCancelled();
        }

        @Override
        public boolean start(int lane) {
            if (task.start(lane)) {
                return true;
            }
            released(); // the engine withdrew it (cancelled): the device drops it without an outcome
            return false;
        }

        private void released() {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            dispatched.remove(task);
            breaker.releasePermission();
            if (bulkhead != null) {
                bulkhead.onComplete();
            }
            waiting.drain();
        }

        @Override
        public int gpuOrdinal() {
            return task.gpuOrdinal();
        }

        @Override
        public List<@Nullable Object> inputs() {
            return task.inputs();
        }

        @Override
        public List<DeviceTask> awaitOnDevice() {
            List<DeviceTask> predecessors = task.awaitOnDevice();
            if (predecessors.isEmpty()) {
                return predecessors;
            }
            List<DeviceTask> seen = new ArrayList<>(predecessors.size());
            for (DeviceTask p : predecessors) {
                Guarded g = dispatched.get(p);
                seen.add(g != null ? g : p);
            }
            return seen;
        }

        @Override
        public boolean enqueued(@Nullable Object result) {
            return task.enqueued(result);
        }

        @Override
        public boolean fallBackToCpu(String reason) {
            boolean moved = task.fallBackToCpu(reason);
            if (moved) {
                released();
            }
            return moved;
        }

        @Override
        public void complete(@Nullable Object result) {
            ended(null);
            task.complete(result);
        }

        @Override
        public void fail(Throwable error) {
            ended(error);
            task.fail(error);
        }
    }
}
