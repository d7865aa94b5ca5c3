package io.hts.engine.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.support.DocExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The example of README.md, docs/api.md and {@link io.hts.engine.graph.TaskGraph}'s Javadoc is
 * {@link FeaturesExample}: the pages show it as written ({@code DocsTests}), the Javadoc too
 * (here, by the same rule), and it runs.
 */
class FeaturesExampleTests {

    @Test
    void taskGraphsJavadocShowsTheExampleAsWritten() throws IOException {
        List<String> source = Files.readAllLines(Path.of("src/test/java/io/hts/engine/example/FeaturesExample.java"));
        assertThat(DocExamples.mismatch(javadocExample(), source))
                .as("TaskGraph's Javadoc shows the body of FeaturesExample.main as written")
                .isNull();
    }

    @Test
    void itRunsAndPrintsTheTotalAndTheProfile() throws Exception {
        String printed = DocExamples.printedBy(FeaturesExample::main);
        long expected = 0;
        for (long r = 0; r < 8_000_000; r++) {
            expected += r * r % 1_000_003;
        }
        assertThat(printed).contains("total = " + expected).contains("of graph 'features': SUCCEEDED, 18 tasks");
    }

    /** The lines of the example in TaskGraph's class Javadoc, without the comment's leading " * ". */
    private static List<String> javadocExample() throws IOException {
        String source = Files.readString(Path.of("src/main/java/io/hts/engine/graph/TaskGraph.java"));
        String block = source.substring(
                source.indexOf(" * <pre>{@code\n") + " * <pre>{@code\n".length(), source.indexOf(" * }</pre>"));
        return block.lines().map(l -> l.length() > 3 ? l.substring(3) : "").toList();
    }
}
