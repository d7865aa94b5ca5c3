package io.hts.engine.observe;

import java.util.Locale;

import io.hts.engine.graph.Device;

/**
 * Writes a {@link RunProfile} as Chrome Trace Event JSON (the "JSON object format": a
 * {@code traceEvents} array of complete events, phase {@code X}, with microsecond timestamps),
 * which Perfetto and {@code chrome://tracing} open. One process per device, one thread per CPU
 * worker or GPU stream.
 */
final class ChromeTraceExporter {

    private static final int CPU_PID = 1;
    private static final int GPU_PID = 2;

    private ChromeTraceExporter() {
    }

    static String export(RunProfile profile) {
        StringBuilder sb = new StringBuilder(256 + profile.graph().size() * 160);
        sb.append("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"graph\":");
        quote(sb, profile.graphName());
        sb.append(",\"run\":").append(profile.runId()).append(",\"status\":\"").append(profile.status())
                .append("\",\"policy\":");
        quote(sb, profile.policy());
        sb.append("},\"traceEvents\":[");
        boolean[] first = {true};
        metadata(sb, first, CPU_PID, -1, "process_name", "CPU (" + profile.graphName() + ")");
        metadata(sb, first, GPU_PID, -1, "process_name", "GPU (" + profile.graphName() + ")");
        for (int w = 0; w < profile.parallelism(); w++) {
            metadata(sb, first, CPU_PID, w, "thread_name", "worker " + w);
        }
        boolean[] gpuLanes = new boolean[64];
        for (TaskTiming t : profile.tasks()) {
            if (!t.ran()) {
                continue;
            }
            int pid = t.device() == Device.GPU ? GPU_PID : CPU_PID;
            if (pid == GPU_PID && t.lane() >= 0 && t.lane() < gpuLanes.length && !gpuLanes[t.lane()]) {
                gpuLanes[t.lane()] = true;
                metadata(sb, first, GPU_PID, t.lane(), "thread_name", "stream " + t.lane());
            }
            comma(sb, first);
            sb.append("{\"name\":");
            quote(sb, t.name());
            sb.append(",\"cat\":\"").append(t.device() == null ? "task" : t.device().id()).append("\",\"ph\":\"X\"")
                    .append(",\"ts\":").append(micros(t.startNanos())).append(",\"dur\":")
                    .append(micros(t.durationNanos())).append(",\"pid\":").append(pid).append(",\"tid\":")
                    .append(Math.max(0, t.lane())).append(",\"args\":{\"index\":").append(t.index())
                    .append(",\"state\":\"").append(t.state()).append("\",\"attempts\":").append(t.attempts())
                    .append(",\"waitMicros\":").append(micros(t.waitNanos())).append("}}");
        }
        sb.append("]}");
        return sb.toString();
    }

    private static void metadata(StringBuilder sb, boolean[] first, int pid, int tid, String kind, String name) {
        comma(sb, first);
        sb.append("{\"name\":\"").append(kind).append("\",\"ph\":\"M\",\"pid\":").append(pid);
        if (tid >= 0) {
            sb.append(",\"tid\":").append(tid);
        }
        sb.append(",\"args\":{\"name\":");
        quote(sb, name);
        sb.append("}}");
    }

    private static void comma(StringBuilder sb, boolean[] first) {
        if (!first[0]) {
            sb.append(',');
        }
        first[0] = false;
    }

    private static String micros(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1000.0);
    }

    static void quote(StringBuilder sb, String s) {
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
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    }
                    else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
