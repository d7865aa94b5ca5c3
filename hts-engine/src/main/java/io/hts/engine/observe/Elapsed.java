package io.hts.engine.observe;

import java.time.Duration;
import java.util.Locale;

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
            return decimal(n / 1e3) + " us";
        }
        if (n < 999_500_000) {
            return decimal(n / 1e6) + " ms";
        }
        long s = d.getSeconds();
        if (s < 60) {
            return decimal(n / 1e9) + " s";
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

    /** Three significant digits at most: 4.56, 45.6, 456. */
    private static String decimal(double v) {
        String s = v < 10
                ? String.format(Locale.ROOT, "%.2f", v)
                : v < 100 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.0f", v);
        if (s.contains(".")) {
            s = s.replaceAll("0+$", "");
            if (s.endsWith(".")) {
                s = s.substring(0, s.length() - 1);
            }
        }
        return s;
    }
}
