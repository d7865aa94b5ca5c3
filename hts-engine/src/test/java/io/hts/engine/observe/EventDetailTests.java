package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Which events are routine, and which the recent-events buffer keeps at each detail. */
class EventDetailTests {

    @Test
    void onlyTheReadyStartedAndSucceededOfATaskAreRoutine() {
        assertThat(Arrays.stream(EventType.values()).filter(EventType::isRoutine))
                .containsExactly(EventType.TASK_READY, EventType.TASK_STARTED, EventType.TASK_SUCCEEDED);
    }

    @Test
    void allKeepsEverythingNotableAllButRoutineAndNoneNothing() {
        for (EventType type : EventType.values()) {
            assertThat(EventDetail.ALL.accepts(type)).as("ALL %s", type).isTrue();
            assertThat(EventDetail.NOTABLE.accepts(type)).as("NOTABLE %s", type).isEqualTo(!type.isRoutine());
            assertThat(EventDetail.NONE.accepts(type)).as("NONE %s", type).isFalse();
        }
    }
}
