package io.hts.engine.observe.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import java.time.Instant;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class EventRingTests {

    @Test
    void aRingWithoutRoomIsRefusedSayingWhatIsAccepted() {
        assertThatThrownBy(() -> new EventRing(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("event buffer capacity must be 1 or more, was 0");
    }

    @Test
    void aFullRingDropsTheOldestAndKeepsSequenceOrder() {
        EventRing ring = new EventRing(3);
        LongStream.rangeClosed(1, 7).forEach(seq -> ring.append(event(seq)));
        assertThat(ring.capacity()).isEqualTo(3);
        assertThat(ring.recent(10)).extracting(TaskEvent::sequence).containsExactly(5L, 6L, 7L);
        assertThat(ring.recent(2)).extracting(TaskEvent::sequence).containsExactly(6L, 7L);
        assertThat(ring.events(5, 10, e -> true))
                .extracting(TaskEvent::sequence)
                .containsExactly(6L, 7L);
        assertThat(ring.events(-1, 1, e -> true))
                .extracting(TaskEvent::sequence)
                .containsExactly(5L);
        assertThat(ring.events(-1, 10, e -> e.sequence() % 2 == 0))
                .extracting(TaskEvent::sequence)
                .containsExactly(6L);
        assertThat(ring).hasToString("EventLog[capacity=3]");
    }

    @Test
    void anEmptyRingHasNoEvents() {
        EventRing ring = new EventRing(4);
        assertThat(ring.recent(4)).isEmpty();
        assertThat(ring.events(-1, 4, e -> true)).isEmpty();
    }

    private static TaskEvent event(long sequence) {
        return new TaskEvent(
                sequence,
                sequence,
                Instant.EPOCH,
                EventType.RUN_SUBMITTED,
                1,
                "g",
                null,
                -1,
                null,
                -1,
                0,
                null,
                null,
                null);
    }
}
