package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Issue 15 item 11: durations and counts in messages and event details read as a person writes them. */
class ElapsedTests {

    @Test
    void durationsInTheUnitOneReadsAtAGlance() {
        assertThat(Elapsed.of(Duration.ofNanos(850))).isEqualTo("850 ns");
        assertThat(Elapsed.of(Duration.ofNanos(12_300))).isEqualTo("12.3 us");
        assertThat(Elapsed.of(Duration.ofNanos(4_500_000))).isEqualTo("4.5 ms");
        assertThat(Elapsed.of(Duration.ofMillis(2350))).isEqualTo("2.35 s");
        assertThat(Elapsed.of(Duration.ofSeconds(185))).isEqualTo("3 min 5 s");
        assertThat(Elapsed.of(Duration.ofMinutes(130))).isEqualTo("2 h 10 min");
        assertThat(Elapsed.of(Duration.ofMillis(-1000))).isEqualTo("-1 s");
        assertThat(Elapsed.of(Duration.ofMillis(250))).isEqualTo("250 ms");
    }

    @Test
    void countsWithTheirNounInTheRightNumber() {
        assertThat(Elapsed.count(1, "task")).isEqualTo("1 task");
        assertThat(Elapsed.count(0, "task")).isEqualTo("0 tasks");
        assertThat(Elapsed.count(2, "task")).isEqualTo("2 tasks");
    }

    @Test
    void eachUnitStartsWhereTheOneBelowWouldNeedAFourthDigit() {
        assertThat(Elapsed.of(Duration.ofNanos(999))).isEqualTo("999 ns");
        assertThat(Elapsed.of(Duration.ofNanos(1_000))).isEqualTo("1 us");
        assertThat(Elapsed.of(Duration.ofNanos(999_499))).isEqualTo("999 us");
        assertThat(Elapsed.of(Duration.ofNanos(999_500))).as("not 1000 us").isEqualTo("1 ms");
        assertThat(Elapsed.of(Duration.ofNanos(999_999))).isEqualTo("1 ms");
        assertThat(Elapsed.of(Duration.ofNanos(1_000_000))).isEqualTo("1 ms");
        assertThat(Elapsed.of(Duration.ofNanos(999_499_999))).isEqualTo("999 ms");
        assertThat(Elapsed.of(Duration.ofNanos(999_500_000))).isEqualTo("1 s");
        assertThat(Elapsed.of(Duration.ofNanos(999_999_999))).as("not 1000 ms").isEqualTo("1 s");
        assertThat(Elapsed.of(Duration.ofSeconds(1))).isEqualTo("1 s");
        assertThat(Elapsed.of(Duration.ofSeconds(59))).isEqualTo("59 s");
        assertThat(Elapsed.of(Duration.ofSeconds(60))).isEqualTo("1 min 0 s");
        assertThat(Elapsed.of(Duration.ofSeconds(3_599))).isEqualTo("59 min 59 s");
        assertThat(Elapsed.of(Duration.ofSeconds(3_600))).isEqualTo("1 h 0 min");
    }

    @Test
    void atMostThreeSignificantDigitsWithoutTrailingZeros() {
        assertThat(Elapsed.of(Duration.ofNanos(1_234_567))).isEqualTo("1.23 ms");
        assertThat(Elapsed.of(Duration.ofNanos(10_000))).isEqualTo("10 us");
        assertThat(Elapsed.of(Duration.ofNanos(99_950))).isEqualTo("100 us");
        assertThat(Elapsed.of(Duration.ofNanos(45_670_000))).isEqualTo("45.7 ms");
        assertThat(Elapsed.of(Duration.ofNanos(456_700_000))).isEqualTo("457 ms");
    }

    /**
     * The digits are the formatter's ({@code %.2f}, {@code %.1f}, {@code %.0f}, trailing zeros
     * dropped), which Elapsed no longer calls (it cost a run's end hundreds of microseconds): a
     * million random durations over every unit, and every nanosecond count around the rounding
     * edges of each unit, read the same both ways.
     */
    @Test
    void theDigitsAreTheFormattersForEveryDuration() {
        SplittableRandom random = new SplittableRandom(34);
        for (int k = 0; k < 1_000_000; k++) {
            long nanos = (long) Math.pow(10, random.nextDouble(3, 11.5)) + random.nextLong(0, 1000);
            assertThat(Elapsed.of(Duration.ofNanos(nanos))).as("%d ns", nanos).isEqualTo(formatted(nanos));
        }
        for (long edge : new long[] {
            1_000L, 10_000L, 100_000L, 999_500L, 10_000_000L, 100_000_000L, 999_500_000L, 10_000_000_000L
        }) {
            for (long nanos = edge - 600; nanos <= edge + 600; nanos++) {
                assertThat(Elapsed.of(Duration.ofNanos(nanos)))
                        .as("%d ns", nanos)
                        .isEqualTo(formatted(nanos));
            }
        }
    }

    /** What Elapsed.of gave below a minute when it formatted with String.format and a regex. */
    private static String formatted(long n) {
        if (n < 1_000) {
            return n + " ns";
        }
        if (n < 999_500) {
            return formattedDecimal(n / 1e3) + " us";
        }
        if (n < 999_500_000) {
            return formattedDecimal(n / 1e6) + " ms";
        }
        if (n < 60_000_000_000L) {
            return formattedDecimal(n / 1e9) + " s";
        }
        return Elapsed.of(Duration.ofNanos(n)); // minutes and hours have no decimals
    }

    private static String formattedDecimal(double v) {
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
