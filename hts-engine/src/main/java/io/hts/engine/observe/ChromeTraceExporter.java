package io.hts.engine.observe;

import io.hts.engine.graph.Device;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * Writes a {@link RunProfile} as Chrome Trace Event JSON (the "JSON object format": a
 * {@code traceEvents} array of complete events, phase {@code X}, with microsecond timestamps),
 * which Perfetto and {@code chrome://tracing} open. One process per device, one thread per CPU
 * worker or GPU stream.
 */
final class ChromeTraceExporter {

    private static final int CPU_PID = 1;
    private static final int GPU_PID = 2;
    /** The attempts that ran on other members of the cluster (their lanes are those members'). */
    private static final int REMOTE_PID = 3;

    private ChromeTraceExporter() {}

    static String export(RunProfile profile) {
        StringBuilder sb = new StringBuilder(256 + profile.topology().size() * 160);
        try {
            write(profile, sb);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex); // a StringBuilder does not throw
        }
        return sb.toString();
    }

    /**
     * Writes the trace to {@code out} as it goes, one task at a time (no whole-trace string); the
     * GPU's process appears only when a task ran on it.
     */
    static void write(RunProfile profile, Appendable out) throws IOException {
        Chunks chunks = new Chunks(profile);
        while (chunks.next(out)) {
            // each call writes one piece
        }
    }

    /**
     * The trace in pieces, made when asked for: the header and the workers' names, then one task
     * at a time, then the end. For writing a trace as a reader pulls it ({@link TraceInputStream}),
     * without the whole of it in memory. One reader at a time.
     */
    static final class Chunks {

        private final RunProfile profile;
        private final List<TaskTiming> tasks;
        private final boolean[] first = {true};
        private final boolean[] gpuLanes = new boolean[64];
        private boolean gpuNamed;
        private boolean remoteNamed;
        private int next = -1;
        private boolean done;

        Chunks(RunProfile profile) {
            this.profile = profile;
            this.tasks = profile.tasks();
        }

        /** Writes the next piece to {@code sb}; {@code false} when there is none left. */
        boolean next(Appendable sb) throws IOException {
            if (done) {
                return false;
            }
            if (next < 0) {
                header(sb);
                next = 0;
                return true;
            }
            while (next < tasks.size()) {
                TaskTiming t = tasks.get(next++);
                if (t.ran()) {
                    task(sb, t);
                    return true;
                }
            }
            sb.append("]}");
            done = true;
            return true;
        }

        private void header(Appendable sb) throws IOException {
            sb.append("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"graph\":");
            quote(sb, profile.graphName());
            sb.append(",\"run\":")
                    .append(Long.toString(profile.runId()))
                    .append(",\"status\":\"")
                    .append(profile.status().name())
                    .append("\",\"policy\":");
            quote(sb, profile.policy());
            sb.append("},\"traceEvents\":[");
            metadata(sb, first, CPU_PID, -1, "process_name", "CPU (" + profile.graphName() + ")");
            for (int w = 0; w < profile.parallelism(); w++) {
                metadata(sb, first, CPU_PID, w, "thread_name", "worker " + w);
            }
        }

        private void task(Appendable sb, TaskTiming t) throws IOException {
            int pid = t.remote() ? REMOTE_PID : t.device() == Device.GPU ? GPU_PID : CPU_PID;
            if (pid == REMOTE_PID && !remoteNamed) {
                remoteNamed = true;
                metadata(sb, first, REMOTE_PID, -1, "process_name", "Other members (" + profile.graphName() + ")");
                metadata(sb, first, REMOTE_PID, 0, "thread_name", "slices sent away");
            }
            if (pid == GPU_PID && !gpuNamed) {
                gpuNamed = true;
                metadata(sb, first, GPU_PID, -1, "process_name", "GPU (" + profile.graphName() + ")");
            }
            if (pid == GPU_PID && t.lane() >= 0 && t.lane() < gpuLanes.length && !gpuLanes[t.lane()]) {
                gpuLanes[t.lane()] = true;
                metadata(sb, first, GPU_PID, t.lane(), "thread_name", "stream " + t.lane());
            }
            comma(sb, first);
            sb.append("{\"name\":");
            quote(sb, t.taskName());
            sb.append(",\"cat\":\"")
                    .append(t.device() == null ? "task" : t.device().id())
                    .append("\",\"ph\":\"X\"")
                    .append(",\"ts\":");
            micros(sb, t.startNanos());
            sb.append(",\"dur\":");
            micros(sb, t.durationNanos());
            sb.append(",\"pid\":")
                    .append(Integer.toString(pid))
                    .append(",\"tid\":")
                    .append(Integer.toString(Math.max(0, t.lane())))
                    .append(",\"args\":{\"index\":")
                    .append(Integer.toString(t.index()))
                    .append(",\"state\":\"")
                    .append(t.state().name())
                    .append("\",\"attempts\":")
                    .append(Integer.toString(t.attempts()))
                    .append(",\"waitMicros\":");
            micros(sb, t.waitNanos());
            sb.append("}}");
        }
    }

    private static void metadata(Appendable sb, boolean[] first, int pid, int tid, String kind, String name)
            throws IOException {
        comma(sb, first);
        sb.append("{\"name\":\"")
                .append(kind)
                .append("\",\"ph\":\"M\",\"pid\":")
                .append(Integer.toString(pid));
        if (tid >= 0) {
            sb.append(",\"tid\":").append(Integer.toString(tid));
        }
        sb.append(",\"args\":{\"name\":");
        quote(sb, name);
        sb.append("}}");
    }

    private static void comma(Appendable sb, boolean[] first) throws IOException {
        if (!first[0]) {
            sb.append(',');
        }
        first[0] = false;
    }

    /** Microseconds with three decimals, as Trace Event JSON wants them, without String.format. */
    static void micros(Appendable sb, long nanos) throws IOException {
        long n = Math.max(0, nanos);
        long fraction = n % 1000;
        sb.append(Long.toString(n / 1000)).append('.');
        if (fraction < 100) {
            sb.append('0');
        }
        if (fraction < 10) {
            sb.append('0');
        }
        sb.append(Long.toString(fraction));
    }

    static void quote(Appendable sb, String s) throws IOException {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        String hex = Integer.toHexString(c);
                        sb.append("\\u").append("0000", hex.length(), 4).append(hex);
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
