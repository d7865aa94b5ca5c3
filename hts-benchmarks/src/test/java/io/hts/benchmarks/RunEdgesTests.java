package io.hts.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** RunEdges, the probe of where W5's overhead goes, run as its users run it (small work, few runs). */
class RunEdgesTests {

    @Test
    void itReportsEachMeasuredRunAndTheMedians() {
        String out = run("dag", "2", "5", "6");
        List<String> lines = Arrays.asList(out.split("\n"));
        assertThat(lines.get(0)).startsWith("dag, 5000 tasks of 5 us, 2 workers");
        assertThat(lines).filteredOn(l -> l.startsWith("run ")).hasSize(2); // runs 4 and 5; 0-3 warm up
        String median = lines.get(lines.size() - 1);
        assertThat(median)
                .startsWith("median: overhead ")
                .contains("submit to first body", "last body to return", "latest first task", "hand-offs");
        double submitToFirst = Double.parseDouble(median.replaceAll(".*submit to first body ([0-9.]+) us.*", "$1"));
        assertThat(submitToFirst).isGreaterThanOrEqualTo(0);
    }

    @Test
    void aSingleRunIsMeasuredToo() {
        String out = run("independent", "1", "1", "1");
        assertThat(out).contains("independent, 10000 tasks of 1 us, 1 workers").contains("run  0:");
    }

    @Test
    void anUnknownShapeIsNamedWithTheKnownOnes() {
        assertThatThrownBy(() -> RunEdges.main(new String[] {"tree"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tree'")
                .hasMessageContaining("dag, independent");
    }

    private static String run(String... args) {
        PrintStream before = System.out;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            RunEdges.main(args);
        } finally {
            System.setOut(before);
        }
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
