package io.hts.engine.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.timelimiter.TimeLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link RetrySpec} and {@link TimeLimitSpec} as users declare them: what each factory gives, which
 * specs are equal (they share one Resilience4j instance per task when equal), and what the records
 * refuse when made directly.
 */
class FaultSpecTests {

    @Test
    void eachRetryFactoryGivesItsRecordAndZeroRetriesIsNone() {
        IntervalFunction backoff = attempt -> 5L;
        RetryConfig config = RetryConfig.custom().maxAttempts(4).build();
        Retry retry = Retry.of("shared", RetryConfig.custom().maxAttempts(3).build());

        assertThat(RetrySpec.retries(0, Duration.ofSeconds(1))).isSameAs(RetrySpec.none());
        assertThat(RetrySpec.retries(0, (IntervalFunction) null)).isSameAs(RetrySpec.none());
        assertThat(RetrySpec.retries(2, (IntervalFunction) null)).isEqualTo(new RetrySpec.Count(2));
        assertThat(RetrySpec.retries(2, backoff)).isEqualTo(new RetrySpec.CustomBackoff(2, backoff));
        assertThat(RetrySpec.retries(2, Duration.ofMillis(50)))
                .isEqualTo(new RetrySpec.FixedBackoff(2, Duration.ofMillis(50)));
        assertThat(RetrySpec.of(config)).isEqualTo(new RetrySpec.Configured(config));
        assertThat(RetrySpec.of(retry)).isEqualTo(new RetrySpec.Instance(retry));
        assertThat(RetrySpec.named("hts-cpu")).isEqualTo(new RetrySpec.Named("hts-cpu"));

        assertThat(RetrySpec.none().retries()).isZero();
        assertThat(RetrySpec.of(config).retries()).isEqualTo(3);
        assertThat(RetrySpec.of(retry).retries()).isEqualTo(2);
        assertThat(RetrySpec.named("hts-cpu").retries()).isEqualTo(-1);
    }

    @Test
    void countsAndFixedBackoffsCompareByValueFunctionsConfigurationsAndInstancesByIdentity() {
        assertThat(RetrySpec.retries(3, Duration.ofMillis(10)))
                .isEqualTo(RetrySpec.retries(3, Duration.ofMillis(10)))
                .hasSameHashCodeAs(RetrySpec.retries(3, Duration.ofMillis(10)))
                .isNotEqualTo(RetrySpec.retries(3, Duration.ofMillis(11)))
                .isNotEqualTo(RetrySpec.retries(4, Duration.ofMillis(10)))
                .isNotEqualTo(RetrySpec.retries(3, (IntervalFunction) null));
        assertThat(RetrySpec.retries(2, attempt -> 5L)).isNotEqualTo(RetrySpec.retries(2, attempt -> 5L));
        assertThat(RetrySpec.of(RetryConfig.ofDefaults())).isNotEqualTo(RetrySpec.of(RetryConfig.ofDefaults()));
        assertThat(TimeLimitSpec.of(Duration.ofSeconds(2)))
                .isEqualTo(TimeLimitSpec.of(Duration.ofSeconds(2)))
                .isNotEqualTo(TimeLimitSpec.of(Duration.ofSeconds(3)));
        assertThat(TimeLimitSpec.of(TimeLimiter.ofDefaults("t")))
                .isNotEqualTo(TimeLimitSpec.of(TimeLimiter.ofDefaults("t")));
        assertThat(TimeLimitSpec.named("slow"))
                .isEqualTo(TimeLimitSpec.named("slow"))
                .isNotEqualTo(TimeLimitSpec.named("fast"));
    }

    @Test
    void recordsMadeDirectlyRefuseWhatTheFactoriesRefuseSayingWhatIsAccepted() {
        assertThatThrownBy(() -> new RetrySpec.Count(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 1 and")
                .hasMessageContaining("RetrySpec.none()");
        assertThatThrownBy(() -> new RetrySpec.FixedBackoff(-1, Duration.ZERO))
                .hasMessage("retries must be between 0 and " + RetrySpec.MAXIMUM_RETRIES + ", was -1");
        assertThatThrownBy(() -> new RetrySpec.FixedBackoff(1, Duration.ofMillis(-1)))
                .hasMessageContaining("retry backoff must be between 0 and 36525 days")
                .hasMessageContaining("PT-0.001S");
        assertThatThrownBy(() -> new RetrySpec.Named(" ")).hasMessage("a retry instance name must not be blank");
        assertThatThrownBy(() -> new TimeLimitSpec.Timeout(Duration.ZERO))
                .hasMessage(
                        "timeout must be between 1 ms and 36525 days (100 years), was PT0S; use noTimeout() for none");
        assertThatThrownBy(() -> new TimeLimitSpec.Named(""))
                .hasMessage("a time limiter instance name must not be blank");
        assertThatThrownBy(() -> RetrySpec.retries(Integer.MAX_VALUE, Duration.ZERO))
                .hasMessageContaining("was " + Integer.MAX_VALUE);
    }

    @Test
    void specsDescribeThemselvesInTheWordsOfTheirMessages() {
        assertThat(RetrySpec.none()).hasToString("no retries");
        assertThat(RetrySpec.retries(3, (IntervalFunction) null)).hasToString("3 retries");
        assertThat(RetrySpec.retries(3, Duration.ofMillis(20))).hasToString("3 retries PT0.02S apart");
        assertThat(RetrySpec.retries(3, attempt -> 1L)).hasToString("3 retries (custom backoff)");
        assertThat(RetrySpec.named("hts-gpu")).hasToString("retry instance 'hts-gpu'");
        assertThat(TimeLimitSpec.none()).hasToString("no timeout");
        assertThat(TimeLimitSpec.of(Duration.ofSeconds(1))).hasToString("timeout PT1S");
        assertThat(TimeLimitSpec.named("slow")).hasToString("time limiter 'slow'");
        assertThat(TimeLimitSpec.none().isNone()).isTrue();
        assertThat(TimeLimitSpec.of(Duration.ofSeconds(1)).isNone()).isFalse();
    }
}
