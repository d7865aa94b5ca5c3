package io.hts.gpu.exec;

import io.hts.gpu.memory.PoolSettings;
import java.time.Duration;

/**
 * How the GPU backend runs one device.
 *
 * @param streams streams per device: how many GPU tasks run at once ({@code hts.gpu.streams-per-device})
 * @param memory the device memory pool's sizes ({@code hts.gpu.memory-pool.*})
 * @param stagingBytes the pinned host staging arena for uploads and downloads: a power of two
 * @param pollSpin how long the completion poller spins past a task's expected end (and an idle
 *     launcher before it parks); beyond that it parks until the task's completion callback. Any
 *     duration of 0 or more is accepted; one over a day spins a day ({@link #MAX_POLL_SPIN})
 * @param spinWhileBusy whether the launcher spins the whole time device work is in flight (one core
 *     per busy device, completions seen within microseconds, like CUDA's default synchronize)
 *     instead of sleeping until shortly before the work's expected end
 */
public record GpuSettings(
        int streams, PoolSettings memory, long stagingBytes, Duration pollSpin, boolean spinWhileBusy) {

    /** The longest spin: a longer {@code pollSpin} spins this long, practically for ever. */
    public static final Duration MAX_POLL_SPIN = Duration.ofDays(1);

    /** Validates the settings. */
    public GpuSettings {
        if (streams < 1) {
            throw new IllegalArgumentException("hts.gpu.streams-per-device must be at least 1, was " + streams);
        }
        if (stagingBytes < 4096 || Long.bitCount(stagingBytes) != 1) {
            throw new IllegalArgumentException(
                    "the pinned staging arena must be a power of two of at least 4096 bytes," + " was " + stagingBytes);
        }
        if (pollSpin.isNegative()) {
            throw new IllegalArgumentException("hts.gpu.poll-spin must be 0 or more, was " + pollSpin);
        }
    }

    /**
     * Defaults: 4 streams, a pool that starts with one 256 MiB arena and may grow to
     * {@code maximumMemory}, a 64 MiB staging arena, 50 µs of spinning, sleeping while long work runs.
     *
     * @param maximumMemory the most device memory the pool may reserve
     * @return the settings
     */
    public static GpuSettings defaults(long maximumMemory) {
        return new GpuSettings(
                4,
                new PoolSettings(
                        Math.min(PoolSettings.DEFAULT_ARENA, maximumMemory),
                        maximumMemory,
                        PoolSettings.DEFAULT_ARENA,
                        PoolSettings.DEFAULT_MINIMUM_BLOCK),
                64L << 20,
                Duration.ofNanos(50_000),
                false);
    }

    /**
     * The poll spin in nanoseconds, at most {@link #MAX_POLL_SPIN}'s (a larger {@link Duration}
     * would overflow a count of nanoseconds).
     *
     * @return nanoseconds
     */
    public long pollSpinNanos() {
        return pollSpin.compareTo(MAX_POLL_SPIN) > 0 ? MAX_POLL_SPIN.toNanos() : pollSpin.toNanos();
    }

    /**
     * These settings with another stream count.
     *
     * @param n streams per device
     * @return the settings
     */
    public GpuSettings withStreams(int n) {
        return new GpuSettings(n, memory, stagingBytes, pollSpin, spinWhileBusy);
    }

    /**
     * These settings with the launcher spinning, or not, while device work is in flight.
     *
     * @param spin whether to spin
     * @return the settings
     */
    public GpuSettings withSpinWhileBusy(boolean spin) {
        return new GpuSettings(streams, memory, stagingBytes, pollSpin, spin);
    }

    /**
     * These settings with another poll spin ({@code hts.gpu.poll-spin}).
     *
     * @param spin how long the launcher spins for work before it sleeps
     * @return the settings
     */
    public GpuSettings withPollSpin(Duration spin) {
        return new GpuSettings(streams, memory, stagingBytes, spin, spinWhileBusy);
    }

    /**
     * These settings with another memory pool.
     *
     * @param pool the pool settings
     * @return the settings
     */
    public GpuSettings withMemory(PoolSettings pool) {
        return new GpuSettings(streams, pool, stagingBytes, pollSpin, spinWhileBusy);
    }
}
