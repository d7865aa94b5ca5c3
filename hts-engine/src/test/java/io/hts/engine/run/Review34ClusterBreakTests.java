package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.cluster.LoopbackCluster;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review of issue 34's distribution move and dynamic tasks, on a scheduler with a cluster engine
 * (the in-memory {@link LoopbackCluster}).
 */
class Review34ClusterBreakTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final LoopbackCluster cluster = new LoopbackCluster();
    private final List<Scheduler> schedulers = new ArrayList<>();
    private final List<LoopbackCluster.Member> held = new ArrayList<>();

    @AfterEach
    void close() {
        held.forEach(LoopbackCluster.Member::release);
        schedulers.forEach(Scheduler::shutdownNow);
        schedulers.forEach(Scheduler::close);
        cluster.close();
    }

    private Scheduler member(LoopbackCluster.Member engine, String prefix, Supplier<TaskGraph> graph) {
        Scheduler s = Scheduler.builder()
                .threads(3)
                .threadNamePrefix(prefix)
                .cluster(engine)
                .build();
        schedulers.add(s);
        s.register(graph.get());
        return s;
    }

    /** A group of four on other members (held there), and a root that adds a task that fails, or fails itself. */
    private static TaskGraph heldGroupAndAFailure(boolean dynamicFailure) {
        TaskGraph g = TaskGraph.named("held-and-failing");
        g.group("remote", 4, (i, t) -> t.cpu(ctx -> 1_000 + i)).distributed(1);
        g.task("root").cpu(ctx -> {
            if (!dynamicFailure) {
                throw new IOException("a static task fails");
            }
            DynamicTasks.spawn(ctx, "fails", x -> {
                throw new IOException("a dynamic task fails");
            });
            return "root";
        });
        return g;
    }

    /**
     * docs/cluster.md: "A run that fails fast does the same [as a cancel]: it does not wait for
     * slices whose results would reach nobody". Control: a static task's failure stops a run whose
     * slices are held on another member, and the run ends. Held.
     */
    @Test
    void aStaticFailureStopsAFailFastRunWithoutWaitingForRemoteSlices() throws Exception {
        LoopbackCluster.Member a = cluster.member("a");
        LoopbackCluster.Member b = cluster.member("b");
        Scheduler coordinator = member(a, "a-", () -> heldGroupAndAFailure(false));
        member(b, "b-", () -> heldGroupAndAFailure(false));
        b.hold(w -> true);
        held.add(b);

        GraphRun run = coordinator.submit(heldGroupAndAFailure(false), RunOptions.failureMode(FailureMode.FAIL_FAST));

        assertThatThrownBy(() -> run.await(WAIT)).isInstanceOf(GraphRunException.class);
        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(b.received()).isNotEmpty();
    }

    /**
     * The same run, whose failure is a dynamic task's (added by the root): {@code DynamicTask.endRunning}
     * stops the run through {@code Propagation.stop}, which never tells the run's extension
     * ({@code RunExtension.cancelled}, "the run ... failed fast (called by the winner of the run's
     * stop)"), so the slices on the other member are not cancelled and the run waits for them: here,
     * where they are held, for ever.
     */
    @Test
    void aDynamicFailureStopsAFailFastRunWithoutWaitingForRemoteSlices() throws Exception {
        LoopbackCluster.Member a = cluster.member("a");
        LoopbackCluster.Member b = cluster.member("b");
        Scheduler coordinator = member(a, "a-", () -> heldGroupAndAFailure(true));
        member(b, "b-", () -> heldGroupAndAFailure(true));
        b.hold(w -> true);
        held.add(b);

        GraphRun run = coordinator.submit(heldGroupAndAFailure(true), RunOptions.failureMode(FailureMode.FAIL_FAST));

        await().atMost(WAIT).until(() -> run.state.stopCause() != null); // the dynamic task failed: the run stops
        assertThat(b.received()).isNotEmpty();
        try {
            run.await(WAIT);
        } catch (GraphRunException expected) {
            // the run failed: as it should
        } catch (TimeoutException hung) {
            throw new AssertionError(
                    "the fail-fast run still waits for the slices held on member b: " + run + "; " + run.states(),
                    hung);
        }
        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
    }

    /**
     * A member of a distributed group whose body adds a task to its run ({@link DynamicTasks#spawn},
     * the base of subflows) works where its slice runs on the coordinator (its context is the
     * kernel's own), but on another member the body gets a {@code SliceContext} (a
     * {@code ForwardingTaskContext}), which {@code spawn} refuses as "not the context of a body HTS
     * runs"; the same body thus fails or succeeds depending on where its slice lands.
     */
    @Test
    @Disabled("defect (open, issue 35): DynamicTasks.spawn refuses the SliceContext a distributed member's body gets"
            + " on another member; tasks added from a remote slice need a decision (added to that member's slice run,"
            + " or refused at submit for distributed groups)")
    void aDistributedMemberAddsTasksWhereverItsSliceRuns() throws Exception {
        Supplier<TaskGraph> graph = () -> {
            TaskGraph g = TaskGraph.named("spawning-members");
            g.group(
                            "part",
                            4,
                            (i, t) -> t.cpu(ctx -> {
                                DynamicTask<Integer> child = DynamicTasks.spawn(ctx, "child", x -> i * 10);
                                return child.name;
                            }))
                    .distributed(1);
            return g;
        };
        LoopbackCluster.Member a = cluster.member("a");
        LoopbackCluster.Member b = cluster.member("b");
        Scheduler coordinator = member(a, "a-", graph);
        member(b, "b-", graph);
        TaskGraph g = graph.get();

        GraphRun run = coordinator.submit(g);
        try {
            run.await(WAIT);
        } catch (GraphRunException ex) {
            // described below
        }

        assertThat(b.served()).as("slices member b ran").isPositive();
        assertThat(run.failures()).as("members that failed").isEmpty();
        assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
    }

    /**
     * Two schedulers on one cluster engine: the second build is refused, naming the problem (held),
     * but the refused scheduler's worker threads (started before the engine refused to serve it)
     * are never stopped: each failed build leaks a pool.
     */
    @Test
    void aSchedulerWhoseBuildIsRefusedLeavesNoThreadsBehind() {
        LoopbackCluster.Member a = cluster.member("a");
        member(a, "first-on-a-", () -> TaskGraph.named("empty"));

        assertThatThrownBy(() -> Scheduler.builder()
                        .threads(2)
                        .threadNamePrefix("second-on-a-")
                        .cluster(a)
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("serves already");

        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
                        .extracting(Thread::getName)
                        .filteredOn(n -> n.startsWith("second-on-a-"))
                        .as("threads of the scheduler whose build failed")
                        .isEmpty());
    }

    /** Schedulers built at once on many threads, each with its own engine (the factory's first load races). Held. */
    @Test
    void schedulersWithClustersBuiltConcurrently() throws Exception {
        int n = 8;
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Scheduler> built = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(n);
        for (int k = 0; k < n; k++) {
            LoopbackCluster.Member m = cluster.member("m" + k);
            threads.add(new Thread(() -> {
                try {
                    start.await();
                    built.add(Scheduler.builder().threads(1).cluster(m).build());
                } catch (Throwable ex) {
                    failures.add(ex);
                }
            }));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(WAIT.toMillis());
        }
        schedulers.addAll(built);
        assertThat(failures).isEmpty();
        assertThat(built).hasSize(n);
        TaskGraph g = TaskGraph.named("tiny");
        TaskGroup<Integer> parts = g.group("p", 8, (i, t) -> t.cpu(ctx -> i)).distributed(1);
        for (Scheduler s : built) {
            s.register(g);
        }
        GraphRun run = built.get(0).submit(g).await(WAIT);
        assertThat(run.results(parts)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    }

    // ================================================================== the extension not found

    @TempDir
    Path dir;

    private final List<AutoCloseable> builtElsewhere = new ArrayList<>();

    @AfterEach
    void closeBuiltElsewhere() throws Exception {
        for (AutoCloseable c : builtElsewhere) {
            c.close();
        }
    }

    /**
     * ExtensionFactory's javadoc: the kernel loads the service "from this module's own providers".
     * On the class path ServiceLoader takes every jar's {@code META-INF/services} file, and the
     * kernel takes the first provider it meets: a stale or foreign entry ahead of hts-engine (an
     * old copy of the engine, a repackaged jar) is used instead of the engine's own, here failing
     * every cluster build with a {@code ServiceConfigurationError} (an Error, which leaks the
     * scheduler's threads as above) although the engine's own provider is right behind it.
     */
    @Test
    void theKernelUsesItsOwnProviderWhateverElseTheClassPathLists() throws Exception {
        Path foreign = dir.resolve("foreign");
        Files.createDirectories(foreign.resolve("META-INF/services"));
        Files.writeString(
                foreign.resolve("META-INF/services/io.hts.engine.run.internal.ExtensionFactory"),
                "com.example.relocated.ClusterDistribution\n");

        Throwable thrown = buildInOwnLoader("foreign-first-", true, foreign);

        // the engine's own provider was found and ran (this test's stand-in engine may then refuse
        // what the distribution asks of it): no ServiceConfigurationError, no "provides no" refusal
        if (thrown != null) {
            assertThat(thrown)
                    .as("what building a scheduler with a cluster threw")
                    .isNotInstanceOf(Error.class);
            assertThat(Arrays.stream(thrown.getStackTrace()).map(StackTraceElement::getClassName))
                    .as("the distribution's own provider ran")
                    .anyMatch(c -> c.startsWith("io.hts.engine.cluster.internal."));
        }
    }

    /**
     * Builds a scheduler with a cluster engine from hts-engine's classes in a class loader of their
     * own, without META-INF/services (a repackaged jar that lost it, say); returns what build()
     * threw.
     */
    private Throwable buildWithoutServiceFile(String threadPrefix) throws Exception {
        return buildInOwnLoader(threadPrefix, false, null);
    }

    /**
     * Builds a scheduler with a cluster engine from hts-engine's classes in a class loader of their
     * own (with or without their service file), with {@code first} ahead of them on its path;
     * returns what build() threw, or null when it built.
     */
    private Throwable buildInOwnLoader(String threadPrefix, boolean withServices, Path first) throws Exception {
        Path classes = Path.of(Scheduler.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        Path copy = dir.resolve("engine-without-services");
        try (Stream<Path> walk = Files.walk(classes)) {
            for (Path p : (Iterable<Path>) walk::iterator) {
                String rel = classes.relativize(p).toString();
                if (!withServices && rel.startsWith("META-INF/services")) {
                    continue;
                }
                Path to = copy.resolve(rel);
                if (Files.isDirectory(p)) {
                    Files.createDirectories(to);
                } else {
                    Files.copy(p, to);
                }
            }
        }
        List<URL> urls = new ArrayList<>();
        if (first != null) {
            urls.add(first.toUri().toURL());
        }
        urls.add(copy.toUri().toURL());
        for (Class<?> c : new Class<?>[] {
            io.github.resilience4j.retry.Retry.class,
            io.github.resilience4j.core.IntervalFunction.class,
            io.github.resilience4j.timelimiter.TimeLimiter.class,
            io.github.resilience4j.circuitbreaker.CircuitBreaker.class,
            io.github.resilience4j.bulkhead.Bulkhead.class,
            org.HdrHistogram.Histogram.class,
            org.slf4j.LoggerFactory.class,
            org.jspecify.annotations.Nullable.class
        }) {
            urls.add(c.getProtectionDomain().getCodeSource().getLocation());
        }
        try (URLClassLoader loader =
                new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Class<?> schedulerType = loader.loadClass("io.hts.engine.run.Scheduler");
            assertThat(schedulerType).isNotSameAs(Scheduler.class);
            Object builder = schedulerType.getMethod("builder").invoke(null);
            Class<?> builderType = builder.getClass();
            builderType.getMethod("threads", int.class).invoke(builder, 2);
            builderType.getMethod("threadNamePrefix", String.class).invoke(builder, threadPrefix);
            Class<?> engineType = loader.loadClass("io.hts.engine.cluster.ClusterEngine");
            Object engine = Proxy.newProxyInstance(loader, new Class<?>[] {engineType}, (proxy, m, args) -> {
                if (m.getName().equals("toString")) {
                    return "a fake engine";
                }
                if (m.getReturnType() == void.class) {
                    return null; // serve, serverChanged, close
                }
                throw new UnsupportedOperationException(m.getName());
            });
            builderType.getMethod("cluster", engineType).invoke(builder, engine);
            try {
                Object built = builderType.getMethod("build").invoke(builder);
                builtElsewhere.add((AutoCloseable) built);
                if (!withServices) {
                    throw new AssertionError(
                            "a scheduler with a cluster was built without the extension's service file");
                }
                return null;
            } catch (InvocationTargetException ex) {
                return ex.getCause();
            }
        }
    }

    /**
     * Without the service file a scheduler with a cluster cannot be built: the error says so, naming
     * the service and the provider to restore (a user who repackaged the jar must know what line
     * in which file went missing: {@code META-INF/services/io.hts.engine.run.internal.ExtensionFactory}
     * listing {@code io.hts.engine.cluster.internal.ClusterDistribution}); the message names the
     * service only.
     */
    @Test
    void withoutTheServiceFileTheErrorNamesTheFileAndTheProviderToRestore() throws Exception {
        Throwable thrown = buildWithoutServiceFile("no-services-a-");

        assertThat(thrown)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("io.hts.engine.run.internal.ExtensionFactory")
                .hasMessageContaining("META-INF/services/io.hts.engine.run.internal.ExtensionFactory")
                .hasMessageContaining("io.hts.engine.cluster.internal.ClusterDistribution");
    }

    /**
     * The refused build has already started the scheduler's worker threads (the extension is
     * looked up last in the constructor); nothing stops them.
     */
    @Test
    void withoutTheServiceFileTheRefusedBuildLeavesNoThreadsBehind() throws Exception {
        Throwable thrown = buildWithoutServiceFile("no-services-b-");

        assertThat(thrown).isInstanceOf(IllegalStateException.class).hasMessageContaining("ExtensionFactory");
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
                        .extracting(Thread::getName)
                        .filteredOn(n -> n.startsWith("no-services-b-"))
                        .as("threads of the scheduler whose build failed")
                        .isEmpty());
    }
}
