package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBarrier;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import org.junit.jupiter.api.Test;

/** The Graphviz DOT of a graph, and of a run: one node per task, labelled and coloured by what it did. */
class DotExporterTests {

    @Test
    void aRunsNodesShowTheDeviceAndDurationOfWhatRanAndAreColouredByState() {
        TaskGraph g = TaskGraph.named("states");
        Task<Integer> load = g.task("load").cpu(ctx -> 1);
        Task<Integer> kernel = g.task("kernel").after(load).gpu(ctx -> 2);
        g.task("report").after(kernel).cpu(ctx -> 3);
        RunProfile p = RecordedRun.of(g)
                .ran("load", Device.CPU, 0, 0, 2_500_000)
                .ran("kernel", Device.GPU, 0, 2_500_000, 2_512_345, TaskState.FAILED)
                .finished(3_000_000, RunStatus.FAILED)
                .profile();
        assertThat(p.toDot())
                .isEqualTo("digraph \"states\" {\n"
                        + "  rankdir=LR;\n"
                        + "  node [shape=box, style=filled, fillcolor=white, fontname=\"Helvetica\"];\n"
                        + "  t0 [label=\"load\\ncpu 2.500 ms\", fillcolor=\"palegreen\"];\n"
                        + "  t1 [label=\"kernel\\ngpu 0.012 ms\", fillcolor=\"salmon\"];\n"
                        + "  t2 [label=\"report\", fillcolor=\"white\"];\n"
                        + "  t0 -> t1;\n"
                        + "  t1 -> t2;\n"
                        + "}\n");
    }

    @Test
    void aBarrierIsADiamond() {
        TaskGraph g = TaskGraph.named("joined");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        TaskBarrier loaded = g.barrier("loaded").after(a);
        g.task("b").after(loaded).cpu(ctx -> 2);
        String dot = DotExporter.export(g.compile());
        assertThat(dot)
                .contains("  t0 [label=\"a\", fillcolor=\"white\"];\n")
                .contains("  t1 [label=\"loaded\", shape=diamond, fillcolor=\"white\"];\n")
                .contains("  t2 [label=\"b\", fillcolor=\"white\"];\n")
                .contains("  t0 -> t1;\n  t1 -> t2;\n");
    }

    /** A name with a backslash (a Windows path, a regular expression) reads as written, not as a line break. */
    @Test
    void backslashesInNamesAreEscapedEvenBeforeAnN() {
        TaskGraph g = TaskGraph.named("C:\\new");
        g.task("read C:\\new\\data").cpu(ctx -> 1);
        g.task("ends with \\").cpu(ctx -> 2);
        RunProfile p = RecordedRun.of(g)
                .ran("read C:\\new\\data", Device.CPU, 0, 0, 1_000_000)
                .finished(2_000_000, RunStatus.CANCELLED)
                .profile();
        assertThat(p.toDot())
                .startsWith("digraph \"C:\\\\new\" {")
                .contains("  t0 [label=\"read C:\\\\new\\\\data\\ncpu 1.000 ms\", fillcolor=\"palegreen\"];\n")
                .contains("  t1 [label=\"ends with \\\\\", fillcolor=\"white\"];\n");
    }
}
