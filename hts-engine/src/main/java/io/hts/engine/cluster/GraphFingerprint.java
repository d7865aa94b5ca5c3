package io.hts.engine.cluster;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * A fingerprint of a compiled graph that is the same in every JVM running the same version of the
 * application: a SHA-256 digest (its first 16 bytes, in hex) of the graph's name and, task by task
 * in declaration order, its name, its group (name, index, size, whether distributed and the slice
 * size it declares), whether it is a barrier, which devices it has bodies for, and the names of its
 * dependencies. Bodies themselves cannot be compared across JVMs: a body changed without changing
 * any of these is not detected.
 */
public final class GraphFingerprint {

    private GraphFingerprint() {}

    /**
     * The fingerprint of a graph; compiles (and so freezes) it.
     *
     * @param graph the graph
     * @return 32 hex digits
     * @throws io.hts.engine.graph.GraphValidationException when the graph is not valid
     */
    public static String of(TaskGraph graph) {
        GraphTopology topology = graph.compile();
        StringBuilder text = new StringBuilder(64 + 48 * topology.size());
        text.append("graph ").append(graph.name()).append('\n');
        List<Task<?>> tasks = graph.tasks();
        for (int i = 0; i < tasks.size(); i++) {
            Task<?> t = tasks.get(i);
            text.append(t.name());
            TaskGroup<?> g = t.group();
            if (g != null) {
                text.append(" group=")
                        .append(g.name())
                        .append('[')
                        .append(t.groupIndex())
                        .append('/')
                        .append(g.size())
                        .append(']');
                if (g.isDistributed()) {
                    text.append(" distributed=").append(g.sliceSize());
                }
            }
            text.append(t.isBarrier() ? " barrier" : "")
                    .append(t.cpuBody() != null ? " cpu" : "")
                    .append(t.gpuBody() != null ? " gpu" : "")
                    .append(" after=")
                    .append(topology.predecessorNames(i))
                    .append('\n');
        }
        try {
            byte[] digest =
                    MessageDigest.getInstance("SHA-256").digest(text.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex); // every Java SE has it
        }
    }
}
