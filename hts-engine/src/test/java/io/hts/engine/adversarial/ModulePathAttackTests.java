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

    /**
     * Two members in one JVM over a cluster engine of the demo module's own: on the module path the
     * kernel finds the distribution as a service of the engine's module ({@code uses} and
     * {@code provides}; the class path has {@code META-INF/services}), and slices run on the other
     * member's scheduler.
     */
    private static final String CLUSTERED = """
            package demo;

            import io.hts.engine.cluster.ClusterEngine;
            import io.hts.engine.cluster.ClusterMember;
            import io.hts.engine.cluster.MembershipEvent;
            import io.hts.engine.cluster.PayloadStore;
            import io.hts.engine.cluster.SliceResult;
            import io.hts.engine.cluster.SliceServer;
            import io.hts.engine.cluster.SliceWork;
            import io.hts.engine.cluster.SubmittedSlice;
            import io.hts.engine.graph.Task;
            import io.hts.engine.graph.TaskGraph;
            import io.hts.engine.graph.TaskGroup;
            import io.hts.engine.policy.DeviceHealth;
            import io.hts.engine.run.Scheduler;
            import java.util.List;
            import java.util.Map;
            import java.util.concurrent.CompletableFuture;
            import java.util.concurrent.CompletionStage;
            import java.util.concurrent.ConcurrentHashMap;
            import java.util.concurrent.atomic.AtomicInteger;
            import java.util.function.Consumer;

            public class Main {
                static final Map<String, SliceServer> SERVERS = new ConcurrentHashMap<>();
                static final Map<String, byte[]> STORE = new ConcurrentHashMap<>();
                static final AtomicInteger ON_B = new AtomicInteger();

                record Engine(String self) implements ClusterEngine {
                    public String name() { return "pair"; }
                    public ClusterMember localMember() { return member(self); }
                    public List<ClusterMember> members() { return List.of(member("a"), member("b")); }
                    ClusterMember member(String id) {
                        return new ClusterMember(id, id, id.equals(self), 2, 0, 0, DeviceHealth.UP, 0);
                    }
                    public SubmittedSlice submit(ClusterMember m, SliceWork work) {
                        CompletionStage<SliceResult> r = SERVERS.get(m.id()).run(work);
                        return new SubmittedSlice() {
                            public ClusterMember member() { return m; }
                            public CompletionStage<SliceResult> result() { return r; }
                            public void cancel() { r.toCompletableFuture().cancel(false); }
                        };
                    }
                    public Subscription onMembershipChange(Consumer<MembershipEvent> listener) { return () -> {}; }
                    public void serve(SliceServer server) { SERVERS.put(self, server); }
                    public PayloadStore payloads() {
                        return new PayloadStore() {
                            public CompletionStage<Void> put(String k, byte[] b) {
                                STORE.put(k, b);
                                return CompletableFuture.completedFuture(null);
                            }
                            public CompletionStage<byte[]> get(String k) {
                                return CompletableFuture.completedFuture(STORE.get(k));
                            }
                            public void delete(String k) { STORE.remove(k); }
                        };
                    }
                }

                static Task<Integer> sum(TaskGraph g) {
                    TaskGroup<Integer> p = g.group("p", 6, (i, t) -> t.cpu(ctx -> {
                        if (Thread.currentThread().getName().startsWith("member-b")) {
                            ON_B.incrementAndGet();
                        }
                        return i * 10;
                    })).distributed(1);
                    return g.task("sum").after(p).cpu(ctx -> ctx.inputs(p).stream().mapToInt(Integer::intValue).sum());
                }

                public static void main(String[] args) {
                    TaskGraph ga = TaskGraph.named("jpms-cluster");
                    TaskGraph gb = TaskGraph.named("jpms-cluster");
                    Task<Integer> sum = sum(ga);
                    sum(gb);
                    try (Scheduler b = Scheduler.builder().threads(2).threadNamePrefix("member-b")
                                    .cluster(new Engine("b")).build();
                            Scheduler a = Scheduler.builder().threads(2).cluster(new Engine("a")).build()) {
                        a.register(ga);
                        b.register(gb);
                        System.out.println("sum=" + a.execute(ga).result(sum) + " ranOnB=" + (ON_B.get() > 0));
                    }
                }
            }
            """;

    @Test
    void aModuleBuildsAClusteredSchedulerWhoseDistributionTheEngineFindsAsAService() throws Exception {
        assertThat(compile("module demo { requires io.hts.engine; }", CLUSTERED))
                .isEmpty();
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
        assertThat(output).contains("sum=150 ranOnB=true");
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
