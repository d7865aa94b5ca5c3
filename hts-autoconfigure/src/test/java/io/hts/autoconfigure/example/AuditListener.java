package io.hts.autoconfigure.example;

import io.hts.engine.observe.EventType;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A listener that logs every run's end and every task that failed (docs/configuration.md's customizer adds it). */
public class AuditListener implements TaskListener {

    private static final Logger log = LoggerFactory.getLogger(AuditListener.class);

    @Override
    public void onEvent(TaskEvent event) {
        if (event.type() == EventType.TASK_FAILED) {
            log.warn("task '{}' of run {} failed: {}", event.taskName(), event.runId(), event.error());
        }
    }

    /** Only the notable events: the scheduler then produces no per-task ready, started, succeeded events for it. */
    @Override
    public boolean wantsRoutineEvents() {
        return false;
    }

    @Override
    public void onRunFinished(RunProfile profile) {
        log.info("audit: run {} of graph '{}': {}", profile.runId(), profile.graphName(), profile.status());
    }
}
