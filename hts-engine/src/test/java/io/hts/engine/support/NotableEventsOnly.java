package io.hts.engine.support;

import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wants only the notable events (failures, cancels, runs' ends), so the scheduler produces no
 * routine ones and takes the paths that only run without them (a continuation starting in one step).
 */
public final class NotableEventsOnly implements TaskListener {

    private final AtomicInteger events = new AtomicInteger();

    @Override
    public void onEvent(TaskEvent event) {
        events.incrementAndGet();
    }

    @Override
    public boolean wantsRoutineEvents() {
        return false;
    }

    /** The events received. */
    public int events() {
        return events.get();
    }
}
