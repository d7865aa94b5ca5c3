package io.hts.engine.support;

import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;

/** Records every event it receives, for assertions. */
public final class RecordingListener implements TaskListener {

    private final ConcurrentLinkedQueue<TaskEvent> events = new ConcurrentLinkedQueue<>();

    @Override
    public void onEvent(TaskEvent event) {
        events.add(event);
    }

    public List<TaskEvent> events() {
        return List.copyOf(events);
    }

    public List<TaskEvent> events(Predicate<TaskEvent> filter) {
        return events.stream().filter(filter).toList();
    }

    public List<EventType> types(String task) {
        return events.stream()
                .filter(e -> task.equals(e.taskName()))
                .map(TaskEvent::type)
                .toList();
    }

    public long count(EventType type) {
        return events.stream().filter(e -> e.type() == type).count();
    }
}
