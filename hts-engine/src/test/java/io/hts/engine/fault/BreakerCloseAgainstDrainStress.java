package io.hts.engine.fault;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.policy.DeviceStatus;
import java.time.Duration;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * {@link CircuitBreakingBackend#close()} races the drain of a {@code dispatch} whose GPU-only task
 * must wait ({@link CircuitBreakingBackend.WhenOpen#WAIT}): once both have returned, the task is
 * failed (r1 = 2), by close or by the drain that found the backend closed. r1 is how it ended: 0
 * not at all, 1 run by the device, 2 failed, 3 handed back, -1 more than once. Before the fix the
 * drain put the task back after close had emptied the queue, and nothing ever ended it (r1 = 0).
 * Each sample is a fresh backend whose device never receives the task; nothing outside the two
 * actors drains it (no recheck is pending: the task's first wait is in the racing drain itself).
 */
public class BreakerCloseAgainstDrainStress {

    /** A window of one call: the defaults' hundred measurements per breaker would fill the heap jcstress gives. */
    private static final CircuitBreakerConfig BREAKER = CircuitBreakerConfig.custom()
            .slidingWindowSize(1)
            .minimumNumberOfCalls(1)
            .build();

    private static final BulkheadConfig ONE_CALL = BulkheadConfig.custom()
            .maxConcurrentCalls(1)
            .maxWaitDuration(Duration.ZERO)
            .build();

    private BreakerCloseAgainstDrainStress() {}

    /** The breaker is forced open: the task waits for it. */
    @JCStressTest
    @Outcome(id = "2", expect = ACCEPTABLE, desc = "failed, by close() or by the drain of a closed backend")
    @Outcome(id = "0", expect = FORBIDDEN, desc = "a task held by a closed backend is neither failed nor handed back")
    @Outcome(
            expect = FORBIDDEN,
            desc = "run by a closed or forced-open backend, handed back without a CPU body, or ended twice")
    @State
    public static class BreakerOpen {

        private final CircuitBreaker breaker = CircuitBreaker.of("hts-gpu", BREAKER);
        private final CircuitBreakingBackend backend =
                new CircuitBreakingBackend(new NoDevice(), breaker, null, CircuitBreakingBackend.WhenOpen.WAIT);
        private final ProbeTask task = new ProbeTask("t", 1, false, null);

        public BreakerOpen() {
            breaker.transitionToForcedOpenState();
        }

        @Actor
        public void dispatch() {
            backend.dispatch(task);
        }

        @Actor
        public void close() {
            backend.close();
        }

        @Arbiter
        public void after(I_Result r) {
            r.r1 = outcome(task);
        }
    }

    /** The bulkhead's one call is taken (by a task the device never ends): the task waits for it. */
    @JCStressTest
    @Outcome(id = "2", expect = ACCEPTABLE, desc = "failed, by close() or by the drain of a closed backend")
    @Outcome(id = "0", expect = FORBIDDEN, desc = "a task held by a closed backend is neither failed nor handed back")
    @Outcome(expect = FORBIDDEN, desc = "run past a full bulkhead, handed back without a CPU body, or ended twice")
    @State
    public static class BulkheadFull {

        private final Bulkhead bulkhead = Bulkhead.of("hts-gpu", ONE_CALL);
        private final CircuitBreakingBackend backend = new CircuitBreakingBackend(
                new NoDevice(), CircuitBreaker.of("hts-gpu", BREAKER), bulkhead, CircuitBreakingBackend.WhenOpen.WAIT);
        private final ProbeTask task = new ProbeTask("t", 1, false, null);

        public BulkheadFull() {
            bulkhead.tryAcquirePermission();
        }

        @Actor
        public void dispatch() {
            backend.dispatch(task);
        }

        @Actor
        public void close() {
            backend.close();
        }

        @Arbiter
        public void after(I_Result r) {
            r.r1 = outcome(task);
        }
    }

    static int outcome(ProbeTask task) {
        return task.extraEnds() > 0 ? -1 : task.end();
    }

    /** A device that runs what it gets at once (the tests' tasks never reach it while they must wait). */
    static final class NoDevice implements DeviceBackend {

        @Override
        public Device device() {
            return Device.GPU;
        }

        @Override
        public String name() {
            return "none:0";
        }

        @Override
        public DeviceStatus status() {
            return new DeviceStatus(Device.GPU, DeviceHealth.UP, 1, 0, 0, 0, -1, "none");
        }

        @Override
        public void dispatch(DeviceTask task) {
            if (task.start(0)) {
                task.complete(null);
            }
        }
    }
}
