package io.hts.sample;

import java.time.Duration;
import java.util.Locale;

/** How numbers read in the summary: counts with separators, durations in s or ms, shares in %. */
public final class Format {

    private Format() {}

    /** {@code 1,000,000}. */
    public static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** {@code 1.92 s} from a second on, {@code 12.3 ms} below. */
    public static String duration(Duration d) {
        return nanos(d.toNanos());
    }

    /** {@link #duration} of nanoseconds. */
    public static String nanos(long nanos) {
        return nanos >= 1_000_000_000L
                ? String.format(Locale.ROOT, "%.2f s", nanos / 1e9)
                : String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }

    /** {@code 12.3 %} of a fraction. */
    public static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.1f %%", 100 * fraction);
    }

    /** {@link String#format} without the platform's locale. */
    public static String of(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
