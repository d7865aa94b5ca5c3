package io.hts.engine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import io.hts.engine.example.FeaturesExample;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The example in README.md is this module's {@link FeaturesExample}, compiled and run here. */
class ReadmeExampleTests {

    @Test
    void theReadmeShowsTheExampleAsWrittenAndItRuns() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        String source = Files.readString(Path.of("src/test/java/io/hts/engine/example/FeaturesExample.java"));
        String body = source.substring(source.indexOf("    public static void main"), source.lastIndexOf('}'));
        assertThat(readme).as("README.md shows FeaturesExample.main as written").contains(body.strip());

        PrintStream original = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            FeaturesExample.main(new String[0]);
        }
        finally {
            System.setOut(original);
        }
        long expected = 0;
        for (long r = 0; r < 8_000_000; r++) {
            expected += r * r % 1_000_003;
        }
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("total = " + expected)
                .contains("of graph 'features': SUCCEEDED, 18 tasks");
    }
}
