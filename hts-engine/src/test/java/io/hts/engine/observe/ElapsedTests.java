package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
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
}
