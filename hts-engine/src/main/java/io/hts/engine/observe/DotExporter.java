package io.hts.engine.observe;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskState;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Writes a graph in Graphviz DOT. With a run profile, nodes are coloured by final state and
 * labelled with their device and duration.
 */
public final class DotExporter {

    private DotExporter() {}

    /**
     * The graph's structure in DOT.
     *
     * @param graph the compiled graph
     * @return the DOT text
     */
    public static String export(GraphTopology graph) {
        return export(graph, null);
    }

    static String export(GraphTopology graph, @Nullable RunProfile profile) {
        StringBuilder sb = new StringBuilder(64 + graph.size() * 48);
        sb.append("digraph ")
                .append(id(graph.name()))
                .append(" {\n  rankdir=LR;\n  node [shape=box, style=filled,"
                        + " fillcolor=white, fontname=\"Helvetica\"];\n");
        for (int i = 0; i < graph.size(); i++) {
            sb.append("  t").append(i).append(" [label=\"");
            escape(sb, graph.name(i));
            String color = "white";
            if (profile != null) {
                TaskTiming t = profile.timing(i);
                if (t.ran()) {
                    // DOT's line break, then the device and the duration
                    sb.append("\\n")
                            .append(t.device() == null ? "" : t.device().id() + " ")
                            .append(String.format(Locale.ROOT, "%.3f ms", t.durationNanos() / 1e6));
                }
                color = color(t.state());
            }
            sb.append('"');
            if (graph.isBarrier(i)) {
                sb.append(", shape=diamond");
            }
            sb.append(", fillcolor=\"").append(color).append("\"];\n");
        }
        for (int i = 0; i < graph.size(); i++) {
            for (int k = graph.successorStart(i); k < graph.successorEnd(i); k++) {
                sb.append("  t")
                        .append(i)
                        .append(" -> t")
                        .append(graph.successor(k))
                        .append(";\n");
            }
        }
        return sb.append("}\n").toString();
    }

    private static String color(TaskState state) {
        return switch (state) {
            case SUCCEEDED -> "palegreen";
            case FAILED -> "salmon";
            case CANCELLED -> "lightgrey";
            case RUNNING, RETRYING -> "lightblue";
            default -> "white";
        };
    }

    private static String id(String s) {
        StringBuilder sb = new StringBuilder("\"");
        escape(sb, s);
        return sb.append('"').toString();
    }

    /** {@code s} inside a DOT string: its quotes and backslashes escaped, so a name reads as written. */
    private static void escape(StringBuilder sb, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
    }
}
