package io.hts.engine.fault;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * A closed {@link CircuitBreakingBackend} fails or hands back every task it holds: randomised
 * rounds through the backend SPI, as the scheduler drives it, in which {@code close()} lands at a
 * random moment among the drains that race it (submissions, on {@code dispatch} and
 * {@code dispatchHere}; breaker state transitions; the device's task ends, on its own thread or
 * inline; cancelled runs). After each round every task dispatched must have ended exactly once: run
 * by the delegate (completed or failed by it), handed back to the CPU, or failed by the breaker's
 * backend. The drains stop once {@code close()} is called, so a task left behind is not picked up
 * by a later submission; only what the backend does by itself (its rechecks, the breaker's own
 * transitions) may still end it, within a generous bound.
 *
 * <p>A seed is printed; {@code -Dhts.breaker.seed=...} replays the rounds, {@code
 * -Dhts.breaker.rounds=N -Dhts.breaker.seconds=S} runs more.
 */
class CircuitBreakingBackendCloseTests {

    private static final long SEED = Long.getLong("hts.breaker.seed", System.nanoTime());
    private static final int ROUNDS = Integer.getInteger("hts.breaker.rounds", 3_000);
    private static final long SECONDS = Long.getLong("hts.breaker.seconds", 10);
    /** Far past the backend's 200 ms recheck, the latest drain it schedules by itself. */
    private static final Duration GENEROUS = Duration.ofSeconds(Long.getLong("hts.breaker.endWithinSeconds", 10));
    /** Rounds with a stranded task the run may see before it stops (more: a failure rate). */
    private static final int MAX_STRANDED_ROUNDS = Integer.getInteger("hts.breaker.maxStrandedRounds", 1);

    @Test
    void closeRacingDrainsFailsOrHandsBackEveryTaskTheBackendHolds() throws Exception {
        System.out.println("CircuitBreakingBackendCloseTests: -Dhts.breaker.seed=" + SEED);
        ExecutorService racers = Executors.newFixedThreadPool(3, r -> {
            Thread t = new Thread(r, "breaker-close-racer");
            t.setDaemon(true);
            return t;
        });
        List<String> stranded = new ArrayList<>();
        int rounds = 0;
        int tasks = 0;
        try {
            Random seeds = new Random(SEED);
            long stop = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
            for (; rounds < ROUNDS && System.nanoTime() - stop < 0 && stranded.size() < MAX_STRANDED_ROUNDS; rounds++) {
                Round round = new Round(rounds, seeds.nextLong());
                round.race(racers);
                tasks += round.dispatched.size();
                String problem = round.check();
                if (problem != null) {
                    stranded.add(problem);
                }
            }
        } finally {
            racers.shutdownNow();
        }
        System.out.println("CircuitBreakingBackendCloseTests: " + rounds + " rounds, " + tasks + " tasks dispatched, "
                + stranded.size() + " rounds with a task not ended exactly once");
        assertThat(stranded)
                .as(
                        "rounds (of %d, seed %d) in which a task was neither run, handed back nor failed, or ended twice",
                        rounds, SEED)
                .isEmpty();
        assertThat(rounds).isPositive();
    }

    /** One backend, its tasks, and the threads that race its close. */
    private static final class Round {

        final int index;
        final long seed;
        final Random rnd;
        final CircuitBreaker breaker;
        final @Nullable Bulkhead bulkhead;
        final CircuitBreakingBackend.WhenOpen whenOpen;
        final ProbeDevice device;
        final CircuitBreakingBackend backend;
        final List<ProbeTask> tasks = new ArrayList<>();
        final AtomicBoolean[] runCancelled = {new AtomicBoolean(), new AtomicBoolean(), new AtomicBoolean()};
        /** Written by the submitter only; read after it has been joined. */
        final List<ProbeTask> dispatched = new ArrayList<>();

        final AtomicInteger submitted = new AtomicInteger();
        final AtomicBoolean submitterDone = new AtomicBoolean();
        /** Set just before {@code close()}: the racing drains stop starting new work. */
        final AtomicBoolean closing = new AtomicBoolean();

        final boolean chaos;
        final int closeAfter;
        final int closeSpins;
        final String setup;

        Round(int index, long seed) {
            this.index = index;
            this.seed = seed;
            this.rnd = new Random(seed);
            boolean autoHalfOpen = rnd.nextBoolean();
            int openMillis = 1 + rnd.nextInt(20);
            breaker = CircuitBreaker.of(
                    "hts-gpu",
                    CircuitBreakerConfig.custom()
                            .slidingWindowSize(4)
                            .minimumNumberOfCalls(2)
                            .failureRateThreshold(50)
                            .waitDurationInOpenState(Duration.ofMillis(openMillis))
                            .automaticTransitionFromOpenToHalfOpenEnabled(autoHalfOpen)
                            .permittedNumberOfCallsInHalfOpenState(1 + rnd.nextInt(2))
                            .build());
            int cap = rnd.nextInt(4);
            bulkhead = cap == 0
                    ? null
                    : Bulkhead.of(
                            "hts-gpu",
                            BulkheadConfig.custom()
                                    .maxConcurrentCalls(cap)
                                    .maxWaitDuration(Duration.ZERO)
                                    .build());
            whenOpen =
                    rnd.nextInt(3) == 0 ? CircuitBreakingBackend.WhenOpen.FAIL : CircuitBreakingBackend.WhenOpen.WAIT;
            double failing = rnd.nextDouble() * 0.8;
            double inline = rnd.nextDouble() * 0.3;
            device = new ProbeDevice(failing, inline);
            backend = new CircuitBreakingBackend(device, breaker, bulkhead, whenOpen);
            String initially = "CLOSED";
            switch (rnd.nextInt(3)) {
                case 0 -> {
                    breaker.transitionToOpenState(); // the first tasks wait (or go elsewhere)
                    initially = "OPEN";
                }
                case 1 -> {
                    breaker.transitionToForcedOpenState();
                    initially = "FORCED_OPEN";
                }
                default -> {}
            }
            chaos = rnd.nextBoolean();
            int n = 2 + rnd.nextInt(30);
            for (int i = 0; i < n; i++) {
                int run = rnd.nextInt(runCancelled.length);
                tasks.add(new ProbeTask("t" + i, run, rnd.nextInt(10) < 4, runCancelled[run]));
            }
            // half the rounds close at once, among the first drains; the others later
            boolean early = rnd.nextBoolean();
            closeAfter = early ? 0 : rnd.nextInt(n + 1);
            closeSpins = rnd.nextInt(early ? 400 : 3_000);
            setup = "round " + index + " (seed " + seed + "): " + n + " tasks, breaker " + initially + ", " + whenOpen
                    + (chaos ? ", transitions and cancels" : "") + ", bulkhead "
                    + (cap == 0 ? "none" : cap) + ", open " + openMillis + " ms"
                    + (autoHalfOpen ? " then half-open" : "")
                    + ", device fails " + Math.round(failing * 100) + " %, reports inline " + Math.round(inline * 100)
                    + " %, closed after " + closeAfter + " dispatches + " + closeSpins + " spins";
        }

        void race(ExecutorService racers) throws Exception {
            // The racers spin on a flag rather than block on a latch, so that they start within
            // nanoseconds of each other: close() then lands among the first drains, not after them.
            AtomicInteger ready = new AtomicInteger();
            AtomicBoolean go = new AtomicBoolean();
            long submitterSeed = rnd.nextLong();
            long chaosSeed = rnd.nextLong();
            List<Future<?>> running = new ArrayList<>();
            running.add(racers.submit(() -> {
                startTogether(ready, go);
                submit(new Random(submitterSeed));
                return null;
            }));
            running.add(racers.submit(() -> {
                startTogether(ready, go);
                close();
                return null;
            }));
            if (chaos) {
                running.add(racers.submit(() -> {
                    startTogether(ready, go);
                    chaos(new Random(chaosSeed));
                    return null;
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (ready.get() < running.size() && System.nanoTime() - deadline < 0) {
                Thread.yield();
            }
            go.set(true);
            for (Future<?> f : running) {
                f.get(GENEROUS.toSeconds() * 3, TimeUnit.SECONDS);
            }
        }

        /** Dispatches the tasks in order (some offered {@code dispatchHere} first) until the backend closes. */
        private void submit(Random r) {
            try {
                for (ProbeTask t : tasks) {
                    if (closing.get()) {
                        return;
                    }
                    dispatched.add(t);
                    if (r.nextInt(5) != 0 || !backend.dispatchHere(t)) {
                        backend.dispatch(t);
                    }
                    submitted.incrementAndGet();
                    spin(r.nextInt(200));
                }
            } finally {
                submitterDone.set(true);
            }
        }

        /** Moves the breaker about, cancels a run, reads the status, until the backend closes. */
        private void chaos(Random r) {
            boolean cancels = r.nextInt(3) == 0;
            while (!closing.get()) {
                int op = r.nextInt(cancels ? 7 : 6);
                try {
                    switch (op) {
                        case 0 -> {
                            // Not from FORCED_OPEN (only this thread enters or leaves it): Resilience4j
                            // 2.4 then keeps the forced state's empty window, and recording a device's
                            // report divides by zero (the backend logs it; thousands of stack traces)
                            if (breaker.getState() != CircuitBreaker.State.FORCED_OPEN) {
                                breaker.transitionToOpenState();
                            }
                        }
                        case 1 -> breaker.transitionToHalfOpenState();
                        case 2 -> breaker.transitionToClosedState();
                        case 3 -> breaker.transitionToForcedOpenState();
                        case 4 -> backend.status();
                        case 5 -> spin(r.nextInt(500));
                        default -> {
                            int run = r.nextInt(runCancelled.length);
                            runCancelled[run].set(true);
                            backend.onRunCancelled(run);
                        }
                    }
                } catch (RuntimeException illegalTransition) {
                    // a transition the breaker refuses from its current state
                }
                spin(r.nextInt(300));
            }
        }

        /** Closes the backend after some dispatches and a random pause. */
        private void close() {
            while (submitted.get() < closeAfter && !submitterDone.get()) {
                Thread.yield();
            }
            spin(closeSpins);
            closing.set(true);
            backend.close();
        }

        /** What went wrong, or {@code null}: every dispatched task ended, exactly once, within the bound. */
        @Nullable
        String check() throws InterruptedException {
            long deadline = System.nanoTime() + GENEROUS.toNanos();
            List<ProbeTask> notEnded = new ArrayList<>();
            List<ProbeTask> endedTwice = new ArrayList<>();
            for (ProbeTask t : dispatched) {
                if (!t.ended().await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    notEnded.add(t);
                }
                if (t.extraEnds() > 0) {
                    endedTwice.add(t);
                }
            }
            if (notEnded.isEmpty() && endedTwice.isEmpty()) {
                return null;
            }
            return setup + ": not ended within " + GENEROUS.toSeconds() + " s " + notEnded + ", ended twice "
                    + endedTwice + "; breaker " + breaker.getState() + ", " + backend.waiting() + " still waiting";
        }

        private static void startTogether(AtomicInteger ready, AtomicBoolean go) {
            ready.incrementAndGet();
            for (int spins = 1; !go.get(); spins++) {
                if (spins % 64 == 0) {
                    Thread.yield(); // more racers than cores: let the others arrive
                } else {
                    Thread.onSpinWait();
                }
            }
        }

        private static void spin(int times) {
            for (int i = 0; i < times; i++) {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * The guarded device: runs each task on a thread of its own (or, at random, on the dispatching
     * thread), failing some; once closed it refuses what it is given as a device backend does (to
     * the CPU, else failed), and its close waits for what it runs.
     */
    private static final class ProbeDevice implements DeviceBackend {

        private final double failing;
        private final double inline;
        private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "probe-device");
            t.setDaemon(true);
            return t;
        });

        ProbeDevice(double failing, double inline) {
            this.failing = failing;
            this.inline = inline;
        }

        @Override
        public Device device() {
            return Device.GPU;
        }

        @Override
        public String name() {
            return "probe:0";
        }

        @Override
        public DeviceStatus status() {
            return new DeviceStatus(Device.GPU, DeviceHealth.UP, 1, 0, 0, 0, -1, "probe");
        }

        @Override
        public void dispatch(DeviceTask task) {
            if (ThreadLocalRandom.current().nextDouble() < inline) {
                run(task);
                return;
            }
            try {
                thread.execute(() -> run(task));
            } catch (RejectedExecutionException closed) {
                if (!task.fallBackToCpu("the probe device is closed")) {
                    task.fail(new IllegalStateException("the probe device is closed"));
                }
            }
        }

        private void run(DeviceTask task) {
            if (!task.start(0)) {
                return;
            }
            if (ThreadLocalRandom.current().nextDouble() < failing) {
                task.fail(new IllegalStateException("kernel failed"));
            } else {
                task.complete(task.taskName());
            }
        }

        @Override
        public void close() {
            thread.shutdown();
            try {
                if (!thread.awaitTermination(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the probe device did not stop");
                }
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
