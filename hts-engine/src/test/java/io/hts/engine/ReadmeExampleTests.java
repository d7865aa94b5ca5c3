package io.hts.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.example.FeaturesExample;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The example in README.md and in {@link io.hts.engine.graph.TaskGraph}'s Javadoc is this module's
 * {@link FeaturesExample}, compiled and run here.
 */
class ReadmeExampleTests {

    @Test
    void theReadmeShowsTheExampleAsWrittenAndItRuns() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        String source = Files.readString(Path.of("src/test/java/io/hts/engine/example/FeaturesExample.java"));
        String body = source.substring(source.indexOf("    public static void main"), source.lastIndexOf('}'));
        assertThat(readme).as("README.md shows FeaturesExample.main as written").contains(body.strip());
        List<String> main = body.strip().lines().toList();
        String inside = main.subList(1, main.size() - 1).stream()
                .map(l -> l.length() > 8 ? l.substring(8) : l.strip())
                .collect(Collectors.joining("\n"));
        assertThat(javadocExample())
                .as("TaskGraph's Javadoc shows the body of FeaturesExample.main as written")
                .isEqualTo(inside);

        PrintStream original = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            FeaturesExample.main(new String[0]);
        } finally {
            System.setOut(original);
        }
        long expected = 0;
        for (long r = 0; r < 8_000_000; r++) {
            expected += r * r % 1_000_003;
        }
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("total = " + expected)
                .contains("of graph 'features': SUCCEEDED, 18 tasks");
    }

    /** The lines of the example in TaskGraph's class Javadoc, without the comment's leading " * ". */
    private static String javadocExample() throws IOException {
        String source = Files.readString(Path.of("src/main/java/io/hts/engine/graph/TaskGraph.java"));
        String block = source.substring(
                source.indexOf(" * <pre>{@code\n") + " * <pre>{@code\n".length(), source.indexOf(" * }</pre>"));
        return block.lines()
                .map(l -> l.length() > 3 ? l.substring(3) : "")
                .collect(Collectors.joining("\n"))
                .strip();
    }
}
