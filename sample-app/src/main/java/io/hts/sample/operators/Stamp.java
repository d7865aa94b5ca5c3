package io.hts.sample.operators;

import java.util.List;

/**
 * When a body's timed work started and ended ({@link System#nanoTime()}); a stage's time is its
 * bodies' span, from the first start to the last end.
 *
 * @param startNanos when it started
 * @param endNanos when it ended
 */
public record Stamp(long startNanos, long endNanos) {

    /** From the earliest start to the latest end. */
    public static long span(List<Stamp> stamps) {
        long start = Long.MAX_VALUE;
        long end = Long.MIN_VALUE;
        for (Stamp s : stamps) {
            start = Math.min(start, s.startNanos);
            end = Math.max(end, s.endNanos);
        }
        return Math.max(1, end - start);
    }
}
