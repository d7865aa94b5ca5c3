package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.internal.EventBus;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.CapturedErr;
import io.hts.engine.support.RecordingListener;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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

    @RegisterExtension
    final CapturedErr err = new CapturedErr();

    /** A listener that wants only the notable events. */
    private static final class NotableOnly implements TaskListener {

        final RecordingListener got = new RecordingListener();

        @Override
        public void onEvent(TaskEvent event) {
            got.onEvent(event);
        }

        @Override
        public boolean wantsRoutineEvents() {
            return false;
        }
    }

    private static TaskGraph oneTask(String name) {
        TaskGraph g = TaskGraph.named(name);
        g.task("t").cpu(ctx -> 1);
        return g;
    }

    @Test
    void aListenerThatWantsNoRoutineEventsGetsOnlyTheNotableOnesWhileAnotherGetsThemAll() {
        NotableOnly notable = new NotableOnly();
        RecordingListener all = new RecordingListener();
        try (Scheduler s =
                Scheduler.builder().threads(1).listener(notable).listener(all).build()) {
            s.execute(oneTask("mixed"));
        }
        assertThat(all.types("t")).contains(EventType.TASK_STARTED);
        assertThat(notable.got.events())
                .extracting(TaskEvent::type)
                .containsExactly(EventType.RUN_SUBMITTED, EventType.RUN_SUCCEEDED);
    }

    @Test
    void removingTheMiddleListenerKeepsTheOthers() {
        RecordingListener first = new RecordingListener();
        RecordingListener middle = new RecordingListener();
        RecordingListener last = new RecordingListener();
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            s.addListener(first);
            s.addListener(middle);
            s.addListener(last);
            assertThat(s.removeListener(middle)).isTrue();
            s.execute(oneTask("after-removal"));
        }
        assertThat(middle.events()).isEmpty();
        assertThat(first.count(EventType.RUN_SUCCEEDED)).isOne();
        assertThat(last.count(EventType.RUN_SUCCEEDED)).isOne();
    }

    @Test
    void eventsCarryTheWallClockTimeTheyHappened() {
        RecordingListener events = new RecordingListener();
        Instant before;
        Instant after;
        try (Scheduler s = Scheduler.builder().threads(1).listener(events).build()) {
            before = Instant.now();
            s.execute(oneTask("clock"));
            after = Instant.now();
        }
        // a second either way for the two clocks' granularity
        assertThat(events.events())
                .isNotEmpty()
                .allSatisfy(e -> assertThat(e.time()).isBetween(before.minusSeconds(1), after.plusSeconds(1)));
    }

    @Test
    void theFirstFailureOfAListenerIsLoggedNamingItTheEventTheRunAndTheTask() {
        TaskListener broken = new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {
                if (event.type() == EventType.TASK_STARTED) {
                    throw new IllegalStateException("listener bug");
                }
            }

            @Override
            public String toString() {
                return "broken-listener";
            }
        };
        try (Scheduler s = Scheduler.builder().threads(1).listener(broken).build()) {
            long first = s.execute(oneTask("logged")).runId();
            s.execute(oneTask("logged"));
            assertThat(s.listenerFailures()).isEqualTo(2);
            assertThat(err.text())
                    .contains("task listener broken-listener on TASK_STARTED of run " + first
                            + " task 't' threw java.lang.IllegalStateException; scheduling goes on"
                            + " (further failures at DEBUG)");
            assertThat(err.count("threw")).as("later failures at DEBUG only").isOne();
        }
    }

    /** A listener whose description fails too: named by its class. */
    private static final class Undescribable implements TaskListener {

        @Override
        public void onEvent(TaskEvent event) {
            throw new IllegalStateException("listener bug");
        }

        @Override
        public String toString() {
            throw new UnsupportedOperationException("no description");
        }
    }

    @Test
    void aListenerThatCannotBeDescribedIsNamedByItsClassOnARunEvent() {
        try (Scheduler s =
                Scheduler.builder().threads(1).listener(new Undescribable()).build()) {
            long run = s.execute(oneTask("undescribed")).runId();
            assertThat(err.text())
                    .contains("task listener " + Undescribable.class.getName() + " on RUN_SUBMITTED of run " + run
                            + " threw java.lang.IllegalStateException");
        }
    }

    @Test
    void aListenerFailingOnAFinishedRunIsCountedAndLoggedAndTheOthersStillGetTheProfile() {
        List<RunProfile> profiles = new java.util.concurrent.CopyOnWriteArrayList<>();
        TaskListener failing = new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {}

            @Override
            public void onRunFinished(RunProfile profile) {
                throw new IllegalStateException("metrics bug");
            }

            @Override
            public String toString() {
                return "failing-metrics";
            }
        };
        TaskListener reading = new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {}

            @Override
            public void onRunFinished(RunProfile profile) {
                profiles.add(profile);
            }
        };
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .listener(failing)
                .listener(reading)
                .build()) {
            s.execute(oneTask("finished"));
            assertThat(s.listenerFailures()).isOne();
        }
        assertThat(profiles).singleElement().extracting(RunProfile::graphName).isEqualTo("finished");
        assertThat(err.text())
                .contains("task listener failing-metrics on an event threw java.lang.IllegalStateException");
    }

    @Test
    void aListenerThatCannotSayWhetherItWantsRoutineEventsIsCountedOnceAndGetsEveryEvent() {
        RecordingListener got = new RecordingListener();
        TaskListener unsure = new TaskListener() {
            @Override
            public void onEvent(TaskEvent event) {
                got.onEvent(event);
            }

            @Override
            public boolean wantsRoutineEvents() {
                throw new IllegalStateException("cannot say");
            }
        };
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            s.addListener(unsure);
            assertThat(s.listenerFailures()).as("asked when added").isOne();
            s.execute(oneTask("unsure"));
            assertThat(s.listenerFailures())
                    .as("asked once, not again per event")
                    .isOne();
        }
        assertThat(got.count(EventType.RUN_SUBMITTED)).isOne();
        assertThat(got.count(EventType.RUN_SUCCEEDED)).isOne();
        assertThat(got.count(EventType.TASK_STARTED))
                .as("a listener that cannot say gets every event, the routine ones too")
                .isOne();
        assertThat(got.count(EventType.TASK_SUCCEEDED)).isOne();
    }

    @Test
    void aBufferOfOneEventKeepsTheLatest() {
        try (Scheduler s = Scheduler.builder().threads(1).eventBufferSize(1).build()) {
            s.execute(oneTask("single"));
            EventLog log = s.eventLog().orElseThrow();
            assertThat(log.capacity()).isOne();
            assertThat(log.recent(5)).extracting(TaskEvent::type).containsExactly(EventType.RUN_SUCCEEDED);
        }
    }
}
