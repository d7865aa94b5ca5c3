package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.internal.EventBus;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.RecordingListener;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EventBusTests {

    @Test
    void everyStateChangeOfARunReachesAListener() {
        RecordingListener events = new RecordingListener();
        try (Scheduler s = Scheduler.builder().threads(2).listener(events).build()) {
            TaskGraph g = TaskGraph.named("events");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            g.task("b").after(a).cpu(ctx -> 2);
            s.execute(g);
        }
        assertThat(events.types("a"))
                .containsExactly(EventType.TASK_READY, EventType.TASK_STARTED, EventType.TASK_SUCCEEDED);
        assertThat(events.types("b"))
                .containsExactly(EventType.TASK_READY, EventType.TASK_STARTED, EventType.TASK_SUCCEEDED);
        assertThat(events.events()).first().extracting(TaskEvent::type).isEqualTo(EventType.RUN_SUBMITTED);
        assertThat(events.events()).last().extracting(TaskEvent::type).isEqualTo(EventType.RUN_SUCCEEDED);
        List<TaskEvent> all = events.events();
        for (int i = 1; i < all.size(); i++) {
            assertThat(all.get(i).sequence()).isGreaterThan(all.get(i - 1).sequence());
        }
    }

    @Test
    void aFailingListenerNeverBreaksSchedulingNorOtherListeners() {
        RecordingListener healthy = new RecordingListener();
        AtomicInteger calls = new AtomicInteger();
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .listener(e -> {
                    calls.incrementAndGet();
                    throw new IllegalStateException("listener bug");
                })
                .listener(healthy)
                .build()) {
            TaskGraph g = TaskGraph.named("robust");
            Task<Integer> t = g.task("t").cpu(ctx -> 42);
            assertThat(s.execute(g).result(t)).isEqualTo(42);
            assertThat(s.listenerFailures()).isEqualTo(calls.get()).isPositive();
        }
        assertThat(healthy.count(EventType.TASK_SUCCEEDED)).isOne();
    }

    @Test
    void theRingBufferIsBoundedKeepsNotableEventsAndServesACursor() {
        try (Scheduler s = Scheduler.builder().threads(2).eventBufferSize(8).build()) {
            EventLog log = s.eventLog().orElseThrow();
            assertThat(log.capacity()).isEqualTo(8);
            for (int i = 0; i < 10; i++) {
                TaskGraph g = TaskGraph.named("g" + i);
                g.task("t").cpu(ctx -> 1);
                s.execute(g);
            }
            List<TaskEvent> recent = log.recent(100);
            assertThat(recent).hasSize(8);
            assertThat(recent)
                    .extracting(TaskEvent::type)
                    .as("routine events are not kept by default")
                    .containsOnly(EventType.RUN_SUBMITTED, EventType.RUN_SUCCEEDED);
            long cursor = recent.get(3).sequence();
            List<TaskEvent> after = log.events(cursor, 100, e -> true);
            assertThat(after).hasSize(4).allMatch(e -> e.sequence() > cursor);
            assertThat(log.events(cursor, 2, e -> true)).hasSize(2);
            assertThat(log.events(-1, 100, e -> e.type() == EventType.RUN_SUCCEEDED))
                    .hasSize(4);
        }
    }

    @Test
    void withAllDetailTheBufferKeepsRoutineEventsToo() {
        try (Scheduler s =
                Scheduler.builder().threads(1).eventDetail(EventDetail.ALL).build()) {
            TaskGraph g = TaskGraph.named("all");
            g.task("t").cpu(ctx -> 1);
            s.execute(g);
            assertThat(s.eventLog().orElseThrow().recent(10))
                    .extracting(TaskEvent::type)
                    .containsExactly(
                            EventType.RUN_SUBMITTED,
                            EventType.TASK_READY,
                            EventType.TASK_STARTED,
                            EventType.TASK_SUCCEEDED,
                            EventType.RUN_SUCCEEDED);
        }
    }

    @Test
    void routineEventsAreNotProducedWhenNobodyWantsThem() {
        EventBus bus = new EventBus(16, EventDetail.NOTABLE);
        assertThat(bus.wantsRoutine()).isFalse();
        assertThat(bus.wants(EventType.TASK_FAILED)).isTrue();
        TaskListener notableOnly = new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {}

            @Override
            public boolean wantsRoutineEvents() {
                return false;
            }
        };
        bus.addListener(notableOnly);
        assertThat(bus.wantsRoutine()).isFalse();
        RecordingListener all = new RecordingListener();
        bus.addListener(all);
        assertThat(bus.wantsRoutine()).isTrue();
        assertThat(bus.removeListener(all)).isTrue();
        assertThat(bus.wantsRoutine()).isFalse();
        EventBus none = new EventBus(0, EventDetail.NONE);
        assertThat(none.wants(EventType.TASK_FAILED)).isFalse();
        assertThat(none.log()).isNull();
    }

    @Test
    void aRemovedListenerGetsNoMoreEventsAndTheSchedulerSaysWhetherItWasSubscribed() {
        RecordingListener listener = new RecordingListener();
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            s.addListener(listener);
            TaskGraph first = TaskGraph.named("first");
            first.task("t").cpu(ctx -> 1);
            s.execute(first);
            assertThat(s.removeListener(listener)).isTrue();
            assertThat(s.removeListener(listener)).as("already removed").isFalse();
            TaskGraph second = TaskGraph.named("second");
            second.task("t").cpu(ctx -> 1);
            s.execute(second);
        }
        assertThat(listener.events()).isNotEmpty().allMatch(e -> e.graphName().equals("first"));
    }

    @Test
    void aSchedulerWithoutABufferHasNoEventLog() {
        try (Scheduler none = Scheduler.builder().threads(1).eventBufferSize(0).build();
                Scheduler nothing = Scheduler.builder()
                        .threads(1)
                        .eventDetail(EventDetail.NONE)
                        .build()) {
            assertThat(none.eventLog()).isEmpty();
            assertThat(nothing.eventLog()).isEmpty();
        }
    }
}
