package io.hts.autoconfigure;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.util.unit.DataSize;

/**
 * The GPU backend's configuration (module hts-gpu), under {@code hts.gpu.*}: a group of
 * {@link HtsProperties}.
 */
public class GpuProperties {

    /**
     * Whether to use a GPU: auto (a GPU that cannot be started is reported DOWN and tasks with a CPU
     * body run on the CPU), true (required: start-up fails when a GPU cannot be started) or false.
     */
    private GpuEnablement enabled = GpuEnablement.AUTO;

    /** CUDA device ordinals to use. Unset: every GPU of the host. */
    private @Nullable List<Integer> devices;

    /** CUDA streams per device: how many GPU tasks run at once on it. */
    private int streamsPerDevice = 4;

    /** Whether the launcher spins while device work is in flight (one core per busy device). */
    private boolean spinWhileBusy;

    /**
     * How long a device's launcher spins looking for work before it sleeps: when idle, for the
     * next task; when device work is due, past its expected end. Raise it (to 20ms, say) when each
     * request submits one GPU operation with submit() and must not pay a thread wake-up (tens of
     * microseconds on virtual machines; a caller of execute launches its task itself and does not
     * need it), at the cost of one busy core per device while it spins. Any duration of 0 or more
     * is accepted; one over a day spins a day.
     */
    private Duration pollSpin = Duration.ofNanos(50_000);

    private final MemoryPool memoryPool = new MemoryPool();

    private final CircuitBreaker circuitBreaker = new CircuitBreaker();

    public GpuEnablement getEnabled() {
        return this.enabled;
    }

    public void setEnabled(GpuEnablement enabled) {
        this.enabled = enabled;
    }

    public @Nullable List<Integer> getDevices() {
        return this.devices;
    }

    public void setDevices(@Nullable List<Integer> devices) {
        this.devices = devices;
    }

    public int getStreamsPerDevice() {
        return this.streamsPerDevice;
    }

    public void setStreamsPerDevice(int streamsPerDevice) {
        this.streamsPerDevice = streamsPerDevice;
    }

    public boolean isSpinWhileBusy() {
        return this.spinWhileBusy;
    }

    public void setSpinWhileBusy(boolean spinWhileBusy) {
        this.spinWhileBusy = spinWhileBusy;
    }

    public Duration getPollSpin() {
        return this.pollSpin;
    }

    public void setPollSpin(Duration pollSpin) {
        this.pollSpin = pollSpin;
    }

    public MemoryPool getMemoryPool() {
        return this.memoryPool;
    }

    public CircuitBreaker getCircuitBreaker() {
        return this.circuitBreaker;
    }

    /** Whether HTS uses a GPU. */
    public enum GpuEnablement {
        /**
         * When hts-gpu is on the class path and a device is found; otherwise CPU only. A device that
         * is found but cannot be started is reported DOWN (log, health) and its work runs on the CPU.
         */
        AUTO,
        /** Always: start-up fails, saying why, when no usable device is found or one cannot be started. */
        TRUE,
        /** Never: everything runs on the CPU. */
        FALSE
    }

    /**
     * The circuit breaker in front of the GPU backend. With resilience4j-spring-boot4 the
     * application's {@code hts-gpu} circuit breaker instance is used (configured under
     * {@code resilience4j.circuitbreaker.instances.hts-gpu.*}) and the thresholds here are ignored.
     */
    public static class CircuitBreaker {

        /** Whether GPU tasks go through a circuit breaker. */
        private boolean enabled = true;

        /** What a task without a CPU body does while the breaker is open: wait or fail. */
        private WhenOpen whenOpen = WhenOpen.FAIL;

        /** Percentage of failed GPU tasks, over the sliding window, that opens the breaker. */
        private float failureRateThreshold = 50;

        /** How many of the latest GPU tasks the failure rate is computed over (at least that many must have run). */
        private int slidingWindowSize = 20;

        /** How long the breaker stays open before letting trial tasks through. */
        private Duration waitDurationInOpenState = Duration.ofSeconds(30);

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public WhenOpen getWhenOpen() {
            return this.whenOpen;
        }

        public void setWhenOpen(WhenOpen whenOpen) {
            this.whenOpen = whenOpen;
        }

        public float getFailureRateThreshold() {
            return this.failureRateThreshold;
        }

        public void setFailureRateThreshold(float failureRateThreshold) {
            this.failureRateThreshold = failureRateThreshold;
        }

        public int getSlidingWindowSize() {
            return this.slidingWindowSize;
        }

        public void setSlidingWindowSize(int slidingWindowSize) {
            this.slidingWindowSize = slidingWindowSize;
        }

        public Duration getWaitDurationInOpenState() {
            return this.waitDurationInOpenState;
        }

        public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
            this.waitDurationInOpenState = waitDurationInOpenState;
        }
    }

    /** What a GPU-only task does while the GPU's circuit breaker is open. */
    public enum WhenOpen {
        /** Wait until the breaker lets trial tasks through. */
        WAIT,
        /** Fail at once with the breaker's CallNotPermittedException. */
        FAIL
    }

    /** The device memory pool (buddy allocator over arenas from cuMemAlloc). */
    public static class MemoryPool {

        /** Device memory reserved at start-up. */
        private DataSize initial = DataSize.ofMegabytes(256);

        /** The most device memory the pool may reserve. Unset: 90 % of the device's memory. */
        private @Nullable DataSize maximum;

        /** Size of each arena added as the pool grows: a power of two. */
        private DataSize arenaSize = DataSize.ofMegabytes(256);

        /** Smallest block: a power of two of at least 256 bytes. */
        private DataSize minimumBlock = DataSize.ofBytes(256);

        public DataSize getInitial() {
            return this.initial;
        }

        public void setInitial(DataSize initial) {
            this.initial = initial;
        }

        public @Nullable DataSize getMaximum() {
            return this.maximum;
        }

        public void setMaximum(@Nullable DataSize maximum) {
            this.maximum = maximum;
        }

        public DataSize getArenaSize() {
            return this.arenaSize;
        }

        public void setArenaSize(DataSize arenaSize) {
            this.arenaSize = arenaSize;
        }

        public DataSize getMinimumBlock() {
            return this.minimumBlock;
        }

        public void setMinimumBlock(DataSize minimumBlock) {
            this.minimumBlock = minimumBlock;
        }
    }
}
