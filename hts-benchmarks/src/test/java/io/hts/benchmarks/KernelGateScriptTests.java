package io.hts.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review of issue 34's regression gate ({@code scripts/kernel-gate.sh}, which drives {@code
 * scripts/native-peer.sh}), run for real on a git repository of its own in which Maven, java (JMH
 * and ShapeExport) and the C++ compiler are stand-ins ({@code src/test/resources/kernel-gate-fakes}):
 * the scripts' own logic (knobs, checks, the temporary worktree, the summary, the verdict) runs in
 * a second, with figures the test chooses.
 */
class KernelGateScriptTests {

    @TempDir
    Path dir;

    private Path repo;
    private Path fakes;
    private String baseline;
    private Path mvnLog;

    private record Result(int exit, String output) {}

    @BeforeEach
    void repository() throws Exception {
        fakes = dir.resolve("fakes/bin");
        Files.createDirectories(fakes);
        Path javaHome = dir.resolve("fakes/jdk");
        Files.createDirectories(javaHome.resolve("bin"));
        executable(javaHome.resolve("bin/java"), "java");
        executable(fakes.resolve("g++"), "cxx");
        repo = dir.resolve("repo");
        Path scripts = repo.resolve("hts-benchmarks/scripts");
        Files.createDirectories(scripts);
        for (String s : List.of("kernel-gate.sh", "native-peer.sh")) {
            Files.copy(Path.of("scripts", s), scripts.resolve(s));
        }
        Path nativeDir = repo.resolve("hts-benchmarks/native");
        Files.createDirectories(nativeDir.resolve("taskflow"));
        for (String s : List.of("tbb_flow_graph.cpp", "taskflow_graph.cpp", "peer_harness.hpp")) {
            Files.writeString(nativeDir.resolve(s), "// stand-in\n");
        }
        Files.writeString(nativeDir.resolve("taskflow/taskflow.hpp"), "  return \"4.1.0\";\n");
        executable(repo.resolve("mvnw"), "mvnw");
        Files.writeString(repo.resolve(".gitignore"), "target/\n");
        git("init", "-q", "-b", "main");
        Files.writeString(scripts.resolve("kernel-gate.baseline"), "# none\n");
        git("add", "-A");
        git("commit", "-q", "-m", "baseline");
        baseline = git("rev-parse", "HEAD").trim();
        Files.writeString(repo.resolve("change.txt"), "a change\n");
        git("add", "-A");
        git("commit", "-q", "-m", "the change");
        mvnLog = dir.resolve("mvn.log");
        Files.writeString(mvnLog, "");
    }

    private void executable(Path to, String fake) throws IOException {
        try (InputStream in = getClass().getResourceAsStream("/kernel-gate-fakes/" + fake)) {
            Files.write(to, in.readAllBytes());
        }
        Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private String git(String... args) throws Exception {
        List<String> command =
                new ArrayList<>(List.of("git", "-c", "user.name=review", "-c", "user.email=r@example.com"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .directory(repo.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("git %s: %s", List.of(args), out).isZero();
        return out;
    }

    /** Runs the gate with the stand-ins and {@code env} (one shape, one round, Taskflow only, by default). */
    private Result gate(Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                        "bash",
                        repo.resolve("hts-benchmarks/scripts/kernel-gate.sh").toString())
                .directory(repo.toFile())
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Map<String, String> e = pb.environment();
        e.put("PATH", fakes + File.pathSeparator + System.getenv("PATH"));
        e.put("JAVA_HOME", dir.resolve("fakes/jdk").toString());
        e.put("CXX", fakes.resolve("g++").toString());
        e.put("BASELINE", baseline);
        e.put("SHAPES", "chain");
        e.put("ROUNDS", "1");
        e.put("PEERS", "taskflow");
        e.put("METHODS", "hts htsNoProfiling");
        e.put("GATED", "htsNoProfiling");
        e.put("OUT", dir.resolve("out").toString());
        e.put("FAKE_MVN_LOG", mvnLog.toString());
        e.putAll(env);
        e.values().removeIf(v -> v == null);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(p.exitValue(), out);
    }

    private static Map<String, String> env(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    // ================================================================== what held

    /** Equal figures pass; a slow-down beyond the tolerance fails with exit 3, naming shape and method. Held. */
    @Test
    void theVerdictOnEqualAndSlowerFigures() throws Exception {
        Result same = gate(env("FAKE_NOW_NS", "100", "FAKE_BASE_NS", "100"));
        assertThat(same.exit()).as(same.output()).isZero();
        assertThat(same.output()).contains("kernel-gate: passed");

        Result slower = gate(env("FAKE_NOW_NS", "150", "FAKE_BASE_NS", "100"));
        assertThat(slower.exit()).as(slower.output()).isEqualTo(3);
        assertThat(slower.output())
                .contains("REGRESSION")
                .contains("chain htsNoProfiling: 150.0 ns a task against 100.0");
    }

    /**
     * The baseline's build fails: the gate says so (exit 2), removes its temporary worktree and
     * caches no jar; the next gate builds again. Held.
     */
    @Test
    void aBaselineThatDoesNotBuildLeavesNoWorktreeNorJar() throws Exception {
        Result r = gate(env("FAKE_MVN_FAIL_IN_WORKTREE", "1"));

        assertThat(r.exit()).as(r.output()).isEqualTo(2);
        assertThat(r.output()).contains("building " + baseline.substring(0, 7) + "'s benchmarks failed");
        Matcher m = Pattern.compile("in (/tmp/kernel-gate-baseline-\\w+)").matcher(r.output());
        assertThat(m.find()).as(r.output()).isTrue();
        assertThat(Path.of(m.group(1))).doesNotExist();
        assertThat(git("worktree", "list").lines()).hasSize(1);
        assertThat(repo.resolve("hts-benchmarks/target/baseline/benchmarks-" + baseline + ".jar"))
                .doesNotExist();

        Result again = gate(env());
        assertThat(again.exit()).as(again.output()).isZero();
    }

    // ================================================================== defects

    /**
     * TOLERANCE is checked to be a number by Python's {@code float()}, which takes "nan": every
     * comparison with NaN is false, so the gate passes whatever the figures (here 10x slower).
     */
    @Test
    void aToleranceOfNanDoesNotPassEveryRegression() throws Exception {
        Result r = gate(env("TOLERANCE", "nan", "FAKE_NOW_NS", "1000", "FAKE_BASE_NS", "100"));

        assertThat(r.exit()).as(r.output()).isNotZero();
        assertThat(r.output()).doesNotContain("kernel-gate: passed");
    }

    /**
     * A gated method that produced no figure at all (a typo in METHODS and GATED, which the gate
     * checks only against each other, while another method runs) is skipped by the verdict ("now is
     * None: continue"): the gate passes without having measured the method it gates.
     */
    @Test
    void aGatedMethodThatNeverRanDoesNotPass() throws Exception {
        Result r = gate(env(
                "METHODS", "hts htsNoProfilng",
                "GATED", "hts htsNoProfilng",
                "FAKE_NOW_NS", "100",
                "FAKE_BASE_NS", "100"));

        assertThat(r.exit()).as(r.output()).isNotZero();
        assertThat(r.output()).contains("htsNoProfilng").doesNotContain("kernel-gate: passed");
    }

    /** ROUNDS=0 (or any ROUNDS bash reads as 0) measures nothing, and the gate passes on no figures. */
    @Test
    void aGateThatMeasuredNothingDoesNotPass() throws Exception {
        Result r = gate(env("ROUNDS", "0", "FAKE_NOW_NS", "1000", "FAKE_BASE_NS", "100"));

        assertThat(r.exit()).as(r.output()).isNotZero();
        assertThat(r.output()).doesNotContain("kernel-gate: passed");
    }

    /**
     * OUT is a knob; a gate run again into the same OUT with fewer rounds (or other shapes) reads
     * the previous run's raw files too (native-peer.sh's summary globs {@code $OUT/raw/*round*}):
     * here rounds 2 and 3 of an earlier, equal measurement outvote this run's 10x slow-down, and the
     * gate passes.
     */
    @Test
    void aGateRunIntoAnEarlierOutJudgesItsOwnFiguresOnly() throws Exception {
        Result earlier = gate(env("ROUNDS", "3", "FAKE_NOW_NS", "100", "FAKE_BASE_NS", "100"));
        assertThat(earlier.exit()).as(earlier.output()).isZero();

        Result r = gate(env("ROUNDS", "1", "FAKE_NOW_NS", "1000", "FAKE_BASE_NS", "100"));

        assertThat(r.exit()).as(r.output()).isEqualTo(3);
        assertThat(r.output()).contains("REGRESSION");
    }

    /**
     * Without python3 on the PATH the gate says that TOLERANCE='0.10' is not a number (its check is
     * a python3 one-liner whose failure it takes for a bad value), instead of naming python3 as
     * native-peer.sh would.
     */
    @Test
    void withoutPythonTheGateNamesPython() throws Exception {
        Path bin = dir.resolve("no-python-bin");
        Files.createDirectories(bin);
        for (String tool : List.of(
                "bash", "git", "grep", "head", "tr", "date", "mktemp", "dirname", "cat", "cp", "mkdir", "sed", "awk",
                "cut", "tac", "paste", "env", "ls", "rm", "chmod", "printf", "tail", "nproc", "lscpu", "free")) {
            Path found = which(tool);
            if (found != null) { // a wrapper, not a link: the temporary directory's clean-up then says nothing
                Files.writeString(bin.resolve(tool), "#!/bin/sh\nexec " + found + " \"$@\"\n");
                Files.setPosixFilePermissions(bin.resolve(tool), PosixFilePermissions.fromString("rwxr-xr-x"));
            }
        }
        Result r = gate(env("PATH", fakes + File.pathSeparator + bin));

        assertThat(r.exit()).as(r.output()).isNotZero();
        assertThat(r.output()).contains("python3").doesNotContain("is not a number");
    }

    /**
     * native-peer.sh "checks them first and says what is missing"; the gate, though, first builds
     * the baseline's benchmarks in a worktree (minutes of Maven on the 2-core box) and only then
     * runs native-peer.sh, which finds the C++ compiler missing: the user waits for a build that
     * could never be used.
     */
    @Test
    void aMissingCompilerIsReportedBeforeTheBaselineIsBuilt() throws Exception {
        Result r = gate(env("CXX", "/nonexistent/g++"));

        assertThat(r.exit()).as(r.output()).isNotZero();
        assertThat(r.output()).contains("no C++ compiler '/nonexistent/g++'");
        assertThat(Files.readAllLines(mvnLog))
                .as("Maven builds made before the missing compiler was reported")
                .isEmpty();
    }

    /**
     * A baseline revision without one of the gated methods (one that predates it) fails the gate
     * with exit 3 and "FAILED, slower than <baseline> beyond the tolerance": nothing was slower;
     * the figure is missing, which the message should say (and the exit status, 3, is the one of a
     * regression).
     */
    @Test
    void aBaselineWithoutTheGatedMethodIsNotCalledSlower() throws Exception {
        Result r = gate(env(
                "METHODS", "hts htsNoProfiling",
                "GATED", "hts htsNoProfiling",
                "FAKE_BASE_METHODS", "hts completableFuture"));

        assertThat(r.exit()).as(r.output()).isNotZero();
        assertThat(r.output()).contains("no figure of the baseline").doesNotContain("slower than");
    }

    /**
     * A gate stopped while it builds the baseline (SIGTERM to the script, as {@code timeout} and
     * {@code kill} send it; the team runs it under {@code timeout 2400}) removes its worktree, but
     * the Maven build it started goes on in the background, in the deleted worktree, for minutes of
     * CPU on the box the next measurement runs on (the same holds for native-peer.sh's JMH JVMs).
     */
    @Test
    void aGateStoppedDuringTheBaselineBuildStopsTheBuild() throws Exception {
        Path pidFile = dir.resolve("mvn.pid");
        ProcessBuilder pb = new ProcessBuilder(
                        "bash",
                        repo.resolve("hts-benchmarks/scripts/kernel-gate.sh").toString())
                .directory(repo.toFile())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("stopped.txt").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Map<String, String> e = pb.environment();
        e.put("PATH", fakes + File.pathSeparator + System.getenv("PATH"));
        e.put("JAVA_HOME", dir.resolve("fakes/jdk").toString());
        e.put("CXX", fakes.resolve("g++").toString());
        e.put("BASELINE", baseline);
        e.put("OUT", dir.resolve("out").toString());
        e.put("FAKE_MVN_SLEEP", "60");
        e.put("FAKE_MVN_PIDFILE", pidFile.toString());
        Process gate = pb.start();
        long build = -1;
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (build < 0 && System.nanoTime() < until) {
                if (Files.exists(pidFile) && !Files.readString(pidFile).isBlank()) {
                    build = Long.parseLong(Files.readString(pidFile).trim());
                } else {
                    java.util.concurrent.locks.LockSupport.parkNanos(10_000_000); // polls a file the stand-in writes
                }
            }
            assertThat(build).as("the baseline build started").isPositive();
            gate.destroy(); // SIGTERM
            assertThat(gate.waitFor(20, TimeUnit.SECONDS)).isTrue();
            boolean ended = ProcessHandle.of(build)
                    .map(h -> {
                        try {
                            h.onExit().get(5, TimeUnit.SECONDS);
                            return true;
                        } catch (Exception ex) {
                            return false;
                        }
                    })
                    .orElse(true);
            assertThat(ended)
                    .as("the baseline's Maven build (pid %d) ended within 5 s of the gate's stop", build)
                    .isTrue();
        } finally {
            if (build > 0) {
                ProcessHandle.of(build)
                        .ifPresent(
                                h -> { // the stand-in this test started, and its sleep
                                    h.descendants().forEach(ProcessHandle::destroy);
                                    h.destroy();
                                });
            }
        }
    }

    private static Path which(String tool) {
        for (String d : System.getenv("PATH").split(File.pathSeparator)) {
            Path p = Path.of(d, tool);
            if (Files.isExecutable(p) && !d.contains("pyenv")) {
                return p;
            }
        }
        return null;
    }
}
