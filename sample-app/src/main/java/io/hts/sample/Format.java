package io.hts.sample;

import java.util.Locale;

/** How numbers read in the summary: counts with separators, shares in % (durations: the engine's {@code Elapsed}). */
public final class Format {

    private Format() {}

    /** {@code 1,000,000}. */
    public static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
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
