package io.hts.engine.observe;

import java.time.Duration;

/**
 * How HTS writes a duration or a count of things in its messages, logs and event details: in the
 * unit a person reads at a glance ({@code 850 ns}, {@code 12.3 us}, {@code 4.5 ms}, {@code 2.35 s},
 * {@code 3 min 5 s}, {@code 2 h 10 min}), never ISO-8601 ({@code PT0.0045S}); and a count with its
 * noun in the right number ({@code 1 task}, {@code 2 tasks}).
 */
public final class Elapsed {

    private Elapsed() {}

    /**
     * A duration as one reads it.
     *
     * @param d the duration
     * @return e.g. {@code 4.5 ms}
     */
    public static String of(Duration d) {
        long n = d.toNanos();
        if (d.isNegative()) {
            return "-" + of(d.negated());
        }
        if (n < 1_000) {
            return n + " ns";
        }
        // from 999.5 up, three digits round to 1000: the next unit reads 1
        if (n < 999_500) {
            return decimal(n, 1_000) + " us";
        }
        if (n < 999_500_000) {
            return decimal(n, 1_000_000) + " ms";
        }
        long s = d.getSeconds();
        if (s < 60) {
            return decimal(n, 1_000_000_000) + " s";
        }
        if (s < 3600) {
            return s / 60 + " min " + s % 60 + " s";
        }
        return s / 3600 + " h " + s % 3600 / 60 + " min";
    }

    /**
     * A count with its noun.
     *
     * @param n the count
     * @param noun the noun in the singular, made plural with an {@code s}
     * @return e.g. {@code 1 task}, {@code 3 tasks}
     */
    public static String count(long n, String noun) {
        return n + " " + (n == 1 ? noun : noun + "s");
    }

    /**
     * {@code n / unit} with three significant digits at most (4.56, 45.6, 456), rounded half up,
     * trailing zeros dropped: what {@code String.format("%.2f")} (or {@code %.1f}, {@code %.0f})
     * and stripping gave, in integer arithmetic. The formatter and a regular expression cost a
     * run's end hundreds of microseconds when its event was described (code that runs once a run
     * is never compiled).
     */
    private static String decimal(long n, long unit) {
        long step = n < 10 * unit ? unit / 100 : n < 100 * unit ? unit / 10 : unit;
        long per = unit / step; // 100, 10 or 1 steps a unit
        long q = (n + step / 2) / step; // n in steps, rounded half up
        long whole = q / per;
        long fraction = q % per;
        if (fraction == 0) {
            return Long.toString(whole);
        }
        if (per == 10) {
            return whole + "." + fraction;
        }
        return fraction % 10 == 0 ? whole + "." + fraction / 10 : whole + (fraction < 10 ? ".0" : ".") + fraction;
    }
}
