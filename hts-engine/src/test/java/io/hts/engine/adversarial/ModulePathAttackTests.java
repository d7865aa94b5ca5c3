package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.hts.engine.run.Scheduler;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A JPMS user of the engine: a tiny named module that {@code requires io.hts.engine} only,
 * compiled (and run) on the module path against the engine's classes and its dependency jars.
 */
class ModulePathAttackTests {

    @TempDir
    Path dir;

    private static String location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toString();
    }

    private static String modulePath() throws URISyntaxException {
        Set<String> path = new LinkedHashSet<>();
        for (Class<?> c : new Class<?>[] {
            Scheduler.class,
            Retry.class,
            IntervalFunction.class,
            TimeLimiter.class,
            CircuitBreaker.class,
            Bulkhead.class,
            Histogram.class,
            LoggerFactory.class,
            Nullable.class
        }) {
            path.add(location(c));
        }
        return String.join(File.pathSeparator, path);
    }

    /** Compiles module {@code demo} from these sources; the diagnostics, or "" when it compiled. */
    private String compile(String moduleInfo, String mainSource, String... extraOptions) throws Exception {
        Path src = dir.resolve("src/demo");
        Files.createDirectories(src.resolve("demo"));
        Files.writeString(src.resolve("module-info.java"), moduleInfo);
        Files.writeString(src.resolve("demo/Main.java"), mainSource);
        // javac as a process: the tests run inside module io.hts.engine, which does not read java.compiler
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "javac").toString(),
                "-d",
                dir.resolve("out").toString(),
                "--module-path",
                modulePath(),
                "--module-source-path",
                dir.resolve("src").toString(),
                "-m",
                "demo"));
        command.addAll(List.of(extraOptions));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return p.exitValue() == 0 ? "" : out;
    }

    private static final String MAIN = """
            package demo;

            import java.time.Duration;
            import io.github.resilience4j.retry.RetryConfig;
            import io.hts.engine.exec.ResourceUsage;
            import io.hts.engine.fault.FaultTolerance;
            import io.hts.engine.fault.RetrySpec;
            import io.hts.engine.fault.TimeLimitSpec;
            import io.hts.engine.graph.Task;
            import io.hts.engine.graph.TaskBuilder;
            import io.hts.engine.graph.TaskGraph;
            import io.hts.engine.graph.TaskGroup;
            import io.hts.engine.run.GraphRun;
            import io.hts.engine.run.Scheduler;

            public class Main {
                public static void main(String[] args) {
                    TaskGraph g = TaskGraph.named("jpms");
                    Task<Integer> a = g.task("a").retries(1, Duration.ofMillis(1)).timeout(Duration.ofSeconds(5))
                            .resource("io", 1).cpu(ctx -> 20);
                    TaskGroup<Integer> s = g.group("s", 2, (i, t) -> t.after(a).retry(RetryConfig.custom().maxAttempts(2).build())
                            .cpu(ctx -> ctx.input(a) + i));
                    Task<Integer> m = g.task("m").after(s).cpu(ctx -> ctx.inputs(s).stream().mapToInt(Integer::intValue).sum());
                    FaultTolerance faults = FaultTolerance.builder().defaultRetry(RetrySpec.retries(1, Duration.ZERO))
                            .defaultTimeLimit(TimeLimitSpec.of(Duration.ofMinutes(1))).build();
                    try (Scheduler scheduler = Scheduler.builder().threads(2).resource("io", 1)
                            .resource(TaskBuilder.GPU_MEMORY, 1).faultTolerance(faults).build()) {
                        GraphRun run = scheduler.execute(g);
                        ResourceUsage usage = scheduler.resources();
                        System.out.println("result=" + run.result(m) + " names=" + usage.names()
                                + " status=" + run.status());
                    }
                }
            }
            """;

    @Test
    void aModuleThatRequiresOnlyTheEngineCompilesAndRunsAGraph() throws Exception {
        assertThat(compile("module demo { requires io.hts.engine; }", MAIN)).isEmpty();
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--module-path",
                        dir.resolve("out") + File.pathSeparator + modulePath(),
                        "-m",
                        "demo/demo.Main")
                .redirectErrorStream(true)
                .start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).contains("result=41 names=[io, gpu-memory] status=SUCCEEDED");
    }

    @Test
    void theInternalPackageIsNotVisibleToAModule() throws Exception {
        String source = """
                package demo;
                public class Main {
                    static Object limiter(io.hts.engine.run.Scheduler s) {
                        return (io.hts.engine.exec.internal.ResourceLimiter) s.resources();
                    }
                }
                """;
        assertThat(compile("module demo { requires io.hts.engine; }", source))
                .contains("io.hts.engine.exec.internal")
                .contains("not visible");
    }

    /** A signature with a type of a module the engine requires without transitive (resilience4j-bulkhead). */
    @Test
    void theCircuitBreakingBackendsBulkheadIsUsableWithoutRequiringIt() throws Exception {
        String source = """
                package demo;
                import io.hts.engine.fault.CircuitBreakingBackend;
                import io.github.resilience4j.circuitbreaker.CircuitBreaker;
                public class Main {
                    static CircuitBreakingBackend wrap(io.hts.engine.exec.DeviceBackend d) {
                        return new CircuitBreakingBackend(d, CircuitBreaker.ofDefaults("cb"),
                                io.github.resilience4j.bulkhead.Bulkhead.ofDefaults("b"), CircuitBreakingBackend.WhenOpen.FAIL);
                    }
                }
                """;
        assertThat(compile("module demo { requires io.hts.engine; }", source)).isEmpty();
    }
}
