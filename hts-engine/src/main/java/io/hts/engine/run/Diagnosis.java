package io.hts.engine.run;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskState;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What a run's unfinished tasks are doing and waiting on, from {@link GraphRun#diagnose()} and the
 * stall watchdog's log line. Read it top-down: tasks that are READY, RUNNING or RETRYING are the
 * frontier; CREATED tasks list the dependencies they still wait for.
 *
 * @param runId the run
 * @param graphName the graph's name
 * @param status the run's status
 * @param elapsed time since submission
 * @param counts tasks per state
 * @param waiting every unfinished task
 * @param abandoned timed-out tasks whose bodies have not returned
 */
public record Diagnosis(
        long runId,
        String graphName,
        RunStatus status,
        Duration elapsed,
        Map<TaskState, Integer> counts,
        List<Waiting> waiting,
        List<String> abandoned) {

    private static final int SHOWN = 50;

    /**
     * One unfinished task.
     *
     * @param taskName its name
     * @param state its state
     * @param waitingOn for a CREATED task, its unfinished dependencies with their states
     * @param reason what it is doing or waiting for, in words
     */
    public record Waiting(String taskName, TaskState state, List<String> waitingOn, String reason) {}

    /** The unfinished tasks that are not waiting for dependencies (READY, RUNNING, RETRYING). */
    public List<Waiting> frontier() {
        return waiting.stream().filter(w -> w.state() != TaskState.CREATED).toList();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("run ")
                .append(runId)
                .append(" of graph '")
                .append(graphName)
                .append("' is ")
                .append(status)
                .append(" after ")
                .append(io.hts.engine.observe.Elapsed.of(elapsed))
                .append("; tasks: ")
                .append(counts);
        if (!abandoned.isEmpty()) {
            sb.append("\n  abandoned after time-out (body still running): ").append(abandoned);
        }
        int shown = 0;
        for (Waiting w : frontier()) {
            if (shown++ == SHOWN) {
                break;
            }
            sb.append("\n  ")
                    .append(w.taskName())
                    .append(" [")
                    .append(w.state())
                    .append("] ")
                    .append(w.reason());
        }
        for (Waiting w : waiting) {
            if (w.state() != TaskState.CREATED) {
                continue;
            }
            if (shown++ == SHOWN) {
                break;
            }
            sb.append("\n  ")
                    .append(w.taskName())
                    .append(" [CREATED] ")
                    .append(w.reason())
                    .append(": ")
                    .append(w.waitingOn());
        }
        if (waiting.size() > SHOWN) {
            sb.append("\n  ... and ")
                    .append(io.hts.engine.observe.Elapsed.count(waiting.size() - SHOWN, "more unfinished task"));
        }
        return sb.toString();
    }
}
