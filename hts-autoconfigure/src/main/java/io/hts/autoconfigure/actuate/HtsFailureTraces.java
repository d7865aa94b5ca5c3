package io.hts.autoconfigure.actuate;

import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The stack traces of failed tasks, for {@code /actuator/htsprofiler/{runId}}: a run's profile
 * keeps each failure as one line of text (it holds no user exception), so this listener keeps the
 * stack trace of each {@code TASK_FAILED} as text, within bounds: the failures of the latest
 * {@value #RUNS} runs that had some, the first {@value #PER_RUN} of each run, each trace cut at
 * {@value #MAX_CHARS} characters. It asks for no routine event, so it costs nothing while tasks
 * succeed; a failure costs one stack trace printed into a string on the failing thread.
 */
final class HtsFailureTraces implements TaskListener {

    /** Runs whose failures are kept. */
    static final int RUNS = 32;
    /** Failures kept of each run. */
    static final int PER_RUN = 16;
    /** The longest trace kept, in characters. */
    static final int MAX_CHARS = 8 * 1024;

    /** By run id, oldest first; each run's traces by task name. Guarded by itself. */
    private final LinkedHashMap<Long, Map<String, String>> runs = new LinkedHashMap<>(16, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Map<String, String>> eldest) {
            return size() > RUNS;
        }
    };

    @Override
    public boolean wantsRoutineEvents() {
        return false;
    }

    @Override
    public void onEvent(TaskEvent event) {
        Throwable error = event.error();
        String task = event.taskName();
        if (event.type() != EventType.TASK_FAILED || error == null || task == null) {
            return;
        }
        synchronized (runs) {
            Map<String, String> traces = runs.get(event.runId());
            if (traces != null && traces.size() >= PER_RUN) {
                return;
            }
        }
        String trace = text(error); // outside the lock: user code (toString, getMessage) may be slow
        synchronized (runs) {
            Map<String, String> traces = runs.computeIfAbsent(event.runId(), id -> new HashMap<>());
            if (traces.size() < PER_RUN) {
                traces.put(task, trace);
            }
        }
    }

    /**
     * A failed task's stack trace, when kept.
     *
     * @param runId the run
     * @param task the task's name
     * @return the trace
     */
    Optional<String> trace(long runId, String task) {
        synchronized (runs) {
            Map<String, String> traces = runs.get(runId);
            return Optional.ofNullable(traces == null ? null : traces.get(task));
        }
    }

    /** The stack trace as printed, at most MAX_CHARS; a throwable whose printing throws still gives a line. */
    static String text(Throwable error) {
        StringWriter out = new StringWriter();
        try (PrintWriter writer = new PrintWriter(out)) {
            error.printStackTrace(writer);
        } catch (RuntimeException | LinkageError ex) {
            out.append(System.lineSeparator())
                    .append("(printing the stack trace of a ")
                    .append(error.getClass().getName())
                    .append(" threw ")
                    .append(ex.getClass().getName())
                    .append(')');
        }
        String trace = out.toString();
        return trace.length() <= MAX_CHARS ? trace : cut(trace);
    }

    private static String cut(String trace) {
        return trace.substring(0, MAX_CHARS) + System.lineSeparator() + "\t... (" + (trace.length() - MAX_CHARS)
                + " more characters)";
    }
}
