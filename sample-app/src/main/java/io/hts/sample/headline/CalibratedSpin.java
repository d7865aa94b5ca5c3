package io.hts.sample.headline;

import java.time.Duration;

/**
 * Busy work of a given duration: a loop of real arithmetic (a xorshift generator feeding a
 * floating-point accumulator, each step depending on the last, so the JIT can neither drop nor
 * shorten it), run for the number of iterations that took that long on one core when calibrated.
 * Never a sleep: a task of 0.5 ms keeps its worker busy for 0.5 ms.
 */
public final class CalibratedSpin {

    private static final long PROBE_NANOS = 5_000_000;

    @SuppressWarnings("unused") // read by no one: keeps the calibration's results alive
    private static volatile long sink;

    private final Duration target;
    private final long iterations;

    private CalibratedSpin(Duration target, long iterations) {
        this.target = target;
        this.iterations = iterations;
    }

    /**
     * Measures the loop here: it grows a probe until it runs for 5 ms (the JIT compiles it meanwhile),
     * then keeps the fastest of seven runs (the one least disturbed by other processes).
     *
     * @param target how long {@link #work} should take
     * @return the calibrated work
     */
    public static CalibratedSpin calibrate(Duration target) {
        long probe = 1 << 10;
        while (time(probe) < PROBE_NANOS) {
            probe *= 2;
        }
        long fastest = Long.MAX_VALUE;
        for (int i = 0; i < 7; i++) {
            fastest = Math.min(fastest, time(probe));
        }
        return of(target, Math.max(1, Math.round((double) probe * target.toNanos() / fastest)));
    }

    /** Work of a known number of iterations (tests). */
    public static CalibratedSpin of(Duration target, long iterations) {
        return new CalibratedSpin(target, iterations);
    }

    private static long time(long n) {
        long start = System.nanoTime();
        sink = spin(n, start);
        return System.nanoTime() - start;
    }

    /** The duration it was calibrated for. */
    public Duration target() {
        return target;
    }

    /** Iterations a task runs. */
    public long iterations() {
        return iterations;
    }

    /**
     * Does the work.
     *
     * @param seed where the arithmetic starts
     * @return its result
     */
    public long work(long seed) {
        return spin(iterations, seed);
    }

    /** {@code n} dependent steps of the generator and the accumulator. */
    static long spin(long n, long seed) {
        long x = seed ^ 0x9E3779B97F4A7C15L;
        if (x == 0) {
            x = 1;
        }
        double acc = 0;
        for (long i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            acc = acc * 0.5 + (x & 0xFFFF);
        }
        return x ^ (long) acc;
    }
}
