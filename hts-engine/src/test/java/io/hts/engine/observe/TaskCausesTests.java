package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Why each failed or cancelled task of a run is so, described once per distinct cause. */
class TaskCausesTests {

    @Test
    void tasksCancelledByOneFailureShareItsDescription() {
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalArgumentException other = new IllegalArgumentException("other");
        List<Throwable> described = new ArrayList<>();
        TaskCauses causes = TaskCauses.collect(5, i -> i == 0 ? null : i == 4 ? other : boom, t -> {
            described.add(t);
            return t.getMessage();
        });
        assertThat(described).containsExactly(boom, other);
        assertThat(causes.of(0)).isNull();
        assertThat(causes.of(1)).isEqualTo("boom");
        assertThat(causes.of(3)).isEqualTo("boom");
        assertThat(causes.of(4)).isEqualTo("other");
    }

    @Test
    void anIndexOutsideTheRunHasNoCause() {
        TaskCauses causes = TaskCauses.collect(3, i -> new IllegalStateException("all"), Throwable::getMessage);
        assertThat(causes.of(2)).isEqualTo("all");
        assertThat(causes.of(3)).isNull();
        assertThat(causes.of(-1)).isNull();
        assertThat(TaskCauses.NONE.of(0)).isNull();
        assertThat(TaskCauses.collect(3, i -> null, Throwable::getMessage)).isSameAs(TaskCauses.NONE);
    }

    @Test
    void theEstimateHoldsAnIndexATaskAndTheTextOfEachDescription() {
        assertThat(TaskCauses.NONE.estimatedBytes()).isZero();
        String why = "y".repeat(500);
        TaskCauses one = TaskCauses.collect(1000, i -> i == 7 ? new IllegalStateException() : null, t -> why);
        assertThat(one.estimatedBytes()).isGreaterThanOrEqualTo(4 * 1000 + why.length());
        TaskCauses two = TaskCauses.collect(
                1000,
                i -> i == 7 ? new IllegalStateException() : i == 8 ? new IllegalArgumentException() : null,
                t -> why);
        assertThat(two.estimatedBytes()).isGreaterThanOrEqualTo(one.estimatedBytes() + why.length());
    }
}
