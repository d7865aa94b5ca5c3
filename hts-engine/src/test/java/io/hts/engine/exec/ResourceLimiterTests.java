package io.hts.engine.exec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ResourceLimiterTests {

    @Test
    void grantsWhileFreeThenQueuesAndServesWaitersOnRelease() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 2L));
        ResourceDemand one = limiter.demand(Map.of("io", 1L), "task 'a'");
        List<String> granted = new ArrayList<>();
        assertThat(limiter.acquireOrWait(one, () -> granted.add("x"))).isTrue();
        assertThat(limiter.acquireOrWait(one, () -> granted.add("y"))).isTrue();
        assertThat(limiter.available("io")).isZero();
        assertThat(limiter.acquireOrWait(one, () -> granted.add("first waiter"))).isFalse();
        assertThat(limiter.acquireOrWait(one, () -> granted.add("second waiter"))).isFalse();
        assertThat(limiter.waiting()).isEqualTo(2);
        limiter.release(one);
        assertThat(granted).containsExactly("first waiter");
        limiter.release(one);
        assertThat(granted).containsExactly("first waiter", "second waiter");
        assertThat(limiter.waiting()).isZero();
        limiter.release(one);
        limiter.release(one);
        assertThat(limiter.available("io")).isEqualTo(2);
    }

    @Test
    void takesMultiResourceDemandsAllOrNothing() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 1L, "gpu-memory", 1000L));
        ResourceDemand both = limiter.demand(Map.of("io", 1L, "gpu-memory", 600L), "task 'a'");
        ResourceDemand memory = limiter.demand(Map.of("gpu-memory", 600L), "task 'b'");
        assertThat(limiter.tryAcquire(memory)).isTrue();
        assertThat(limiter.tryAcquire(both)).isFalse();
        assertThat(limiter.available("io")).as("nothing taken by a failed all-or-nothing attempt").isOne();
        limiter.release(memory);
        assertThat(limiter.tryAcquire(both)).isTrue();
    }

    @Test
    void smallDemandsOvertakeALargeOneOnlyBoundedTimes() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("mem", 10L));
        ResourceDemand big = limiter.demand(Map.of("mem", 10L), "task 'big'");
        ResourceDemand small = limiter.demand(Map.of("mem", 1L), "task 'small'");
        assertThat(limiter.tryAcquire(small)).isTrue();
        List<String> granted = new ArrayList<>();
        assertThat(limiter.acquireOrWait(big, () -> granted.add("big"))).isFalse();
        int overtakes = 0;
        while (limiter.acquireOrWait(small, () -> granted.add("small"))) {
            limiter.release(small);
            overtakes++;
            if (overtakes > 1000) {
                break;
            }
        }
        assertThat(overtakes).as("small arrivals stop overtaking a starving waiter")
                .isLessThanOrEqualTo(ResourceLimiter.MAX_OVERTAKES);
        limiter.release(small);
        assertThat(granted).startsWith("big");
    }

    @Test
    void rejectsUnknownResourcesAndImpossibleAmountsNamingTheTask() {
        ResourceLimiter limiter = new ResourceLimiter(Map.of("io", 2L));
        assertThatThrownBy(() -> limiter.demand(Map.of("disk", 1L), "task 'load'"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task 'load'").hasMessageContaining("'disk'").hasMessageContaining("[io]");
        assertThatThrownBy(() -> limiter.demand(Map.of("io", 3L), "task 'load'"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task 'load'").hasMessageContaining("capacity 2");
        assertThatThrownBy(() -> new ResourceLimiter(Map.of("io", -1L)))
                .hasMessageContaining("'io'").hasMessageContaining("-1");
    }
}
