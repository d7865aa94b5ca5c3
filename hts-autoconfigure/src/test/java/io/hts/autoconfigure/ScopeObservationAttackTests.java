package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.autoconfigure.metrics.HtsMetrics;
import io.hts.autoconfigure.observation.HtsObservationAutoConfiguration;
import io.hts.autoconfigure.observation.HtsRunObservations;
import io.hts.autoconfigure.support.EventStream;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Ended;
import io.hts.engine.support.FakeGpuBackend;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.MDC;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Round 4 attacks on docs/observability.md: MDC, observations, metrics, the trace and event stream endpoints. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ScopeObservationAttackTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(HtsObservationAutoConfiguration.class, HtsAutoConfiguration.class));

    private static String keys() {
        return MDC.get("hts.run") + "/" + MDC.get("hts.graph") + "/" + MDC.get("hts.task");
    }

    /** Counts starts, stops and scopes per observation. */
    static final class Counting implements ObservationHandler<Observation.Context> {
        final Map<Observation.Context, AtomicInteger> starts = new ConcurrentHashMap<>();
        final Map<Observation.Context, AtomicInteger> stops = new ConcurrentHashMap<>();
        final AtomicInteger scopesOpened = new AtomicInteger();
        final AtomicInteger scopesClosed = new AtomicInteger();

        @Override
        public void onStart(Observation.Context c) {
            starts.computeIfAbsent(c, k -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public void onStop(Observation.Context c) {
            stops.computeIfAbsent(c, k -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public void onScopeOpened(Observation.Context c) {
            scopesOpened.incrementAndGet();
        }

        @Override
        public void onScopeClosed(Observation.Context c) {
            scopesClosed.incrementAndGet();
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }

    static final List<String> LISTENER_MDC = new CopyOnWriteArrayList<>();

    @Configuration(proxyBeanMethods = false)
    static class Observed {
        @Bean
        Counting counting() {
            return new Counting();
        }

        @Bean
        ObservationRegistry observationRegistry(Counting c) {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(c);
            return registry;
        }

        @Bean
        DeviceBackend fakeGpu() {
            return new FakeGpuBackend(2);
        }

        @Bean
        TaskListener mdcSpy() {
            return new TaskListener() {
                @Override
                public void onEvent(TaskEvent e) {
                    // a task's own keys in an event about that task: what its body set is still there
                    if (e.taskName() != null
                            && e.taskName().equals(MDC.get("hts.task"))
                            && Long.toString(e.runId()).equals(MDC.get("hts.run"))) {
                        LISTENER_MDC.add(e.type() + " " + e.taskName() + " saw " + keys() + " on "
                                + Thread.currentThread().getName());
                    }
                }

                @Override
                public boolean wantsRoutineEvents() {
                    return true;
                }
            };
        }
    }

    /** Failing, cancelled, retried, timed-out (ignoring interrupts), GPU and nested bodies. */
    private static List<String> hostileRuns(Scheduler s, ObservationRegistry registry) throws Exception {
        List<String> problems = new CopyOnWriteArrayList<>();
        TaskListener none = e -> {};
        TaskGraph nested = TaskGraph.named("nested");
        nested.task("n1").cpu(ctx -> {
            check(registry, ctx.runId(), "nested", problems);
            return 1;
        });
        TaskGraph g = TaskGraph.named("hostile");
        AtomicInteger tries = new AtomicInteger();
        Task<Integer> retried = g.task("retried").retries(2).cpu(ctx -> {
            check(registry, ctx.runId(), "hostile", problems);
            if (tries.incrementAndGet() < 3) {
                throw new IllegalStateException("again");
            }
            return 1;
        });
        g.task("gpu").after(retried).gpu(ctx -> {
            check(registry, ctx.runId(), "hostile", problems);
            return 2;
        });
        g.task("outer").cpu(ctx -> {
            check(registry, ctx.runId(), "hostile", problems);
            ctx.execute(nested);
            check(registry, ctx.runId(), "hostile", problems);
            return 3;
        });
        CountDownLatch release = new CountDownLatch(1);
        g.task("stubborn").timeout(Duration.ofMillis(20)).cpu(ctx -> {
            check(registry, ctx.runId(), "hostile", problems);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (release.getCount() > 0 && System.nanoTime() < until) {
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException ignored) {
                    // ignores it
                }
            }
            check(registry, ctx.runId(), "hostile", problems);
            return 4;
        });
        Ended.run(s.submit(g));
        release.countDown();

        TaskGraph c = TaskGraph.named("cancelled");
        CountDownLatch started = new CountDownLatch(1);
        Task<Integer> spin = c.task("spin").cpu(ctx -> {
            started.countDown();
            while (!ctx.isCancelled()) {
                Thread.onSpinWait();
            }
            check(registry, ctx.runId(), "cancelled", problems);
            return 1;
        });
        c.task("after").after(spin).cpu(ctx -> 2);
        GraphRun cr = s.submit(c);
        assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
        cr.cancel();
        Ended.run(cr);
        assertThat(none).isNotNull();
        return problems;
    }

    /** Inside a body: MDC keys are the task's and the current observation belongs to this run. */
    private static void check(ObservationRegistry registry, long runId, String graph, List<String> problems) {
        String k = keys();
        if (!k.startsWith(runId + "/" + graph + "/")) {
            problems.add("MDC in run " + runId + ": " + k);
        }
        Observation o = registry.getCurrentObservation();
        boolean found = false;
        for (Observation.ContextView v = o == null ? null : o.getContext();
                v != null;
                v = v.getParentObservation() == null
                        ? null
                        : v.getParentObservation().getContextView()) {
            if ("hts.graph.run".equals(v.getName())
                    && v.getHighCardinalityKeyValue("run.id") != null
                    && v.getHighCardinalityKeyValue("run.id").getValue().equals(Long.toString(runId))) {
                found = true;
                break;
            }
        }
        if (!found) {
            problems.add("run " + runId + " body's current observation: " + (o == null ? "none" : o.getContext()));
        }
    }

    @ParameterizedTest(name = "hts.observation.tasks={0}")
    @ValueSource(strings = {"false", "true"})
    void observationsAndMdcSurviveFailuresCancelsTimeOutsRetriesGpuAndNestedRuns(String perTask) {
        LISTENER_MDC.clear();
        runner.withUserConfiguration(Observed.class)
                .withPropertyValues("hts.observation.tasks=" + perTask)
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    ObservationRegistry registry = context.getBean(ObservationRegistry.class);
                    Counting counting = context.getBean(Counting.class);
                    HtsRunObservations runs = context.getBean(HtsRunObservations.class);
                    MDC.put("hts.task", "caller's own");
                    List<String> problems = hostileRuns(s, registry);
                    assertThat(MDC.get("hts.task")).isEqualTo("caller's own");
                    MDC.remove("hts.task");
                    assertThat(problems).as("per task " + perTask).isEmpty();
                    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                        assertThat(runs.openRuns()).isZero();
                        assertThat(counting.scopesOpened.get()).isEqualTo(counting.scopesClosed.get());
                        assertThat(counting.starts.keySet()).isEqualTo(counting.stops.keySet());
                    });
                    assertThat(counting.stops.values()).allMatch(n -> n.get() == 1);
                    assertThat(counting.starts.keySet())
                            .anyMatch(x -> x.getName().equals("hts.graph.run"));
                    if (perTask.equals("true")) {
                        for (Observation.Context t : counting.starts.keySet()) {
                            if (t.getName().equals("hts.task")) {
                                assertThat(t.getParentObservation()).isNotNull();
                            }
                        }
                        assertThat(counting.starts.keySet())
                                .anyMatch(x -> x.getName().equals("hts.task"));
                    }
                    assertThat(LISTENER_MDC).as("listeners saw a body's MDC").isEmpty();
                });
    }

    // ------------------------------------------------------------------ metrics

    private static long tasksCount(SimpleMeterRegistry r) {
        return (long) r.find("hts.tasks").functionTimers().stream()
                .mapToDouble(FunctionTimer::count)
                .sum();
    }

    @Test
    void htsTasksCountsTheTasksThatRanOncePerRegistry() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            HtsMetrics metrics = new HtsMetrics(s);
            SimpleMeterRegistry first = new SimpleMeterRegistry();
            SimpleMeterRegistry second = new SimpleMeterRegistry();
            metrics.bindTo(first);
            metrics.bindTo(second);
            TaskGraph g = TaskGraph.named("three");
            Task<Integer> a = g.task("a").cpu(ctx -> 1);
            Task<Integer> b = g.task("b").after(a).cpu(ctx -> 2);
            g.task("c").after(b).cpu(ctx -> 3);
            s.execute(g);
            await().atMost(Duration.ofSeconds(10)).until(() -> tasksCount(first) > 0);
            assertThat(tasksCount(first))
                    .as("first registry's hts.tasks count after one run of 3 tasks")
                    .isEqualTo(3);
            assertThat(tasksCount(second))
                    .as("second registry's hts.tasks count")
                    .isEqualTo(3);
        }
    }

    @Test
    void htsTasksTagsThePolicyTheRunWasSubmittedUnder() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            SimpleMeterRegistry r = new SimpleMeterRegistry();
            new HtsMetrics(s).bindTo(r);
            String before = s.policy().name();
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("switched");
            Task<Integer> a = g.task("a").cpu(ctx -> {
                started.countDown();
                release.await(20, TimeUnit.SECONDS);
                return 1;
            });
            g.task("b").after(a).cpu(ctx -> 2);
            GraphRun run = s.submit(g);
            assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
            s.setPolicy(io.hts.engine.policy.RoundRobinPolicy.class
                    .getDeclaredConstructor()
                    .newInstance());
            release.countDown();
            run.await(Duration.ofSeconds(20));
            await().atMost(Duration.ofSeconds(10)).until(() -> tasksCount(r) == 2);
            Set<String> policies = new java.util.HashSet<>();
            r.find("hts.tasks")
                    .functionTimers()
                    .forEach(t -> policies.add(t.getId().getTag("policy")));
            assertThat(policies).containsExactly(before);
        }
    }

    // ------------------------------------------------------------------ HTTP

    private static ConfigurableApplicationContext start() {
        return LocalHttp.server(FeaturesApp.class)
                .properties(
                        "server.shutdown=graceful",
                        "spring.lifecycle.timeout-per-shutdown-phase=60s",
                        "management.endpoints.web.exposure.include=htsevents,htsprofiler")
                .run();
    }

    @Test
    void profilerTraceAndDotOverHttp() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            Scheduler s = context.getBean(Scheduler.class);
            TaskGraph g = TaskGraph.named("we\"ird\\name\u00e9");
            g.task("t\"1\u0001").cpu(ctx -> 1);
            GraphRun run = s.execute(g);
            int port = LocalHttp.port(context);
            HttpResponse<byte[]> trace =
                    LocalHttp.getBytes(port, "/actuator/htsprofiler/" + run.runId() + "?format=trace");
            assertThat(trace.statusCode()).isEqualTo(200);
            assertThat(trace.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
            byte[] expected = s.profiler()
                    .run(run.runId())
                    .orElseThrow()
                    .toChromeTrace()
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertThat(trace.body()).isEqualTo(expected);
            new tools.jackson.databind.json.JsonMapper().readTree(trace.body());
            HttpResponse<String> dot = LocalHttp.get(port, "/actuator/htsprofiler/" + run.runId() + "?format=dot");
            assertThat(dot.statusCode()).isEqualTo(200);
            assertThat(dot.headers().firstValue("Content-Type").orElse("")).startsWith("text/vnd.graphviz");
        }
    }

    @Test
    void streamResumesWithoutGapsOrDuplicatesWhileEventsArriveAndBadIdsAre400() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            Scheduler s = context.getBean(Scheduler.class);
            int port = LocalHttp.port(context);
            HttpResponse<String> bad =
                    LocalHttp.get(port, "/actuator/htsevents/stream", "Last-Event-ID", "not-a-number");
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.headers().firstValue("Content-Type").orElse("")).contains("json");

            TaskGraph features = s.registeredGraphs().get("features");
            for (int i = 0; i < 50; i++) {
                s.execute(features);
            }
            long from = s.eventLog()
                    .orElseThrow()
                    .events(-1, Integer.MAX_VALUE, e -> true)
                    .get(5)
                    .sequence();
            AtomicBoolean stop = new AtomicBoolean();
            Thread producer = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        s.execute(features);
                    } catch (RuntimeException ex) {
                        return;
                    }
                }
            });
            producer.setDaemon(true);
            producer.start();
            EventStream stalled = EventStream.open(port, "/actuator/htsevents/stream"); // a client that never reads
            List<Long> ids = new ArrayList<>();
            try (EventStream stream =
                    EventStream.open(port, "/actuator/htsevents/stream", "Last-Event-ID", Long.toString(from))) {
                while (ids.size() < 600 && stream.hasNext()) {
                    String line = stream.next();
                    if (line.startsWith("id:")) {
                        ids.add(Long.parseLong(
                                line.substring(line.lastIndexOf(':') + 1).trim())); // instance:sequence
                    }
                }
            }
            stop.set(true);
            producer.join(20_000);
            stalled.close();
            long last = ids.get(ids.size() - 1);
            List<Long> logged = s.eventLog().orElseThrow().events(from, Integer.MAX_VALUE, e -> true).stream()
                    .map(TaskEvent::sequence)
                    .filter(q -> q <= last)
                    .toList();
            assertThat(ids.get(0)).isGreaterThan(from);
            for (int i = 1; i < ids.size(); i++) {
                assertThat(ids.get(i))
                        .as("ids in order, no duplicates, at " + i)
                        .isGreaterThan(ids.get(i - 1));
            }
            assertThat(ids).as("no gaps against the event log").isEqualTo(logged);
        }
    }

    @Test
    void closingTheApplicationCompletesOpenStreamsPromptly() throws Exception {
        ConfigurableApplicationContext context = start();
        int port = LocalHttp.port(context);
        List<EventStream> open = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            open.add(EventStream.open(port, "/actuator/htsevents/stream"));
        }
        Thread closer = new Thread(context::close);
        closer.setDaemon(true);
        long t0 = System.nanoTime();
        closer.start();
        closer.join(30_000);
        assertThat(closer.isAlive())
                .as("context close still running after 30 s with a 60 s grace period")
                .isFalse();
        for (EventStream stream : open) {
            stream.close();
        }
        assertThat(System.nanoTime() - t0).isPositive();
    }
}
