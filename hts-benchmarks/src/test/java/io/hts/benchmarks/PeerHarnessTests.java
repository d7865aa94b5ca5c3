package io.hts.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review of issue 34's native peers: their shared harness ({@code native/peer_harness.hpp}),
 * driven by a peer of no library (the tasks run in index order on the calling thread), compiled
 * here with g++ (skipped without it).
 */
class PeerHarnessTests {

    private static final String DRIVER = """
            #include "peer_harness.hpp"
            #include <functional>
            int run(const peer::Options& o) {
                peer::Harness h(o, "plain");
                const peer::Shape& shape = h.shape();
                std::vector<std::function<void(int)>> bodies;
                h.build(1, [&](auto make_body) { for (int i = 0; i < shape.tasks; i++) bodies.push_back(make_body(i)); });
                h.measure([&] { for (auto& b : bodies) b(0); });
                h.report({});
                return 0;
            }
            int main(int argc, char** argv) { return peer::main(argc, argv, "plain", run); }
            """;

    @TempDir
    Path dir;

    private static String run(Path workDir, List<String> command) throws Exception {
        Process p = new ProcessBuilder(command)
                .directory(workDir.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("%s: %s", command, out).isZero();
        return out;
    }

    /**
     * The one-line JSON report is assembled partly in a fixed 512-byte buffer (snprintf), which
     * holds the shape file's path: with a path of some 370 characters (native-peer.sh passes
     * {@code $OUT/shapes/<shape>.shape}, so an OUT of about 350) the middle of the report is cut
     * silently ({@code "warmup_seconds":5,,"warmup_ns_per_task"}) and native-peer.sh's summary
     * then fails on a JSONDecodeError.
     */
    @Test
    void theReportIsValidJsonWhateverTheShapeFilesPath() throws Exception {
        assumeTrue(new File("/usr/bin/g++").canExecute() || System.getenv("CXX") != null, "no g++");
        Path source = dir.resolve("driver.cpp");
        Files.writeString(source, DRIVER);
        String cxx = System.getenv().getOrDefault("CXX", "g++");
        run(
                dir,
                List.of(
                        cxx,
                        "-std=c++17",
                        "-O1",
                        "-pthread",
                        "-I",
                        Path.of("native").toAbsolutePath().toString(),
                        source.toString(),
                        "-o",
                        dir.resolve("driver").toString()));
        Path deep = dir.resolve("a".repeat(120)).resolve("b".repeat(120)).resolve("c".repeat(120));
        Files.createDirectories(deep);
        Path shape = deep.resolve("chain.shape");
        Files.writeString(shape, "hts-shape 1 chain-3 3 2\n\n0\n1\n");

        String json = run(
                        dir,
                        List.of(
                                dir.resolve("driver").toString(),
                                shape.toString(),
                                "--warmup-iterations",
                                "0",
                                "--iterations",
                                "1",
                                "--iteration-seconds",
                                "0.01"))
                .lines()
                .findFirst()
                .orElseThrow();

        Path file = dir.resolve("report.json");
        Files.writeString(file, json + "\n");
        Process check = new ProcessBuilder(
                        "python3", "-c", "import json, sys; json.loads(open(sys.argv[1]).readline())", file.toString())
                .redirectErrorStream(true)
                .start();
        String err = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(check.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(check.exitValue())
                .as("the report %s is not JSON: %s", json, err)
                .isZero();
        assertThat(json).contains("\"iterations\":1").contains("\"work_ns\":0");
    }
}
