package io.hts.benchmarks.workload;

import java.time.Duration;
import java.util.Arrays;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Real CPU work of a given duration: JMH's {@link Blackhole#consumeCPU(long)}, a loop the JIT
 * cannot remove, calibrated on this machine. Never a sleep.
 */
public final class CpuWork {

    private CpuWork() {}

    /**
     * The number of {@code consumeCPU} tokens that take {@code duration} here (median of seven
     * measurements).
     *
     * @param duration the target
     * @return the tokens
     */
    public static long tokensFor(Duration duration) {
        long probe = 1_000;
        // warm the loop up and grow the probe until it runs for 20 ms
        while (true) {
            long t = time(probe);
            if (t >= 20_000_000L) {
                break;
            }
            probe *= 2;
        }
        double[] perNano = new double[7];
        for (int i = 0; i < perNano.length; i++) {
            perNano[i] = (double) probe / time(probe);
        }
        Arrays.sort(perNano);
        return Math.max(1, Math.round(perNano[perNano.length / 2] * duration.toNanos()));
    }

    /**
     * Does the work.
     *
     * @param tokens from {@link #tokensFor(Duration)}
     */
    public static void run(long tokens) {
        Blackhole.consumeCPU(tokens);
    }

    /**
     * How long the work takes on one core now, median of several runs.
     *
     * @param tokens the tokens
     * @return nanoseconds
     */
    public static long measure(long tokens) {
        long[] t = new long[9];
        for (int i = 0; i < t.length; i++) {
            t[i] = time(tokens);
        }
        Arrays.sort(t);
        return t[t.length / 2];
    }

    private static long time(long tokens) {
        long t0 = System.nanoTime();
        Blackhole.consumeCPU(tokens);
        return System.nanoTime() - t0;
    }
}
