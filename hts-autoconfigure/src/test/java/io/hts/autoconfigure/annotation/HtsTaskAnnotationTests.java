package io.hts.autoconfigure.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.core.IntervalFunction;
import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.RetrySpec;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GpuTaskContext;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class HtsTaskAnnotationTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class));

    /** The load of the pipeline, in one bean. */
    static class Loader {

        final AtomicInteger loads = new AtomicInteger();

        @HtsTask(graph = "features", priority = 3)
        long[] load() {
            loads.incrementAndGet();
            return new long[] {1, 2, 3, 4};
        }
    }

    /** The rest, in another bean: parameters bound to upstream results, a context anywhere. */
    static class Totals {

        final AtomicInteger attempts = new AtomicInteger();

        @HtsTask(graph = "features", after = "load", retries = 2, timeout = "5s")
        long sum(long[] rows, TaskContext ctx) {
            if (attempts.incrementAndGet() < 2) {
                throw new IllegalStateException("transient, attempt " + ctx.attempt());
            }
            return Arrays.stream(rows).sum();
        }

        @HtsTask(
                graph = "features",
                name = "report",
                after = {"sum", "load"})
        String report(TaskContext ctx, Long sum, long[] rows) {
            return ctx.graphName() + ": " + sum + " over " + rows.length + " rows";
        }
    }

    /** A bean that injects the graph its own methods make up. */
    static class SelfRunning {

        @Autowired
        @Qualifier("tiny")
        TaskGraph tiny;

        @HtsTask(graph = "tiny")
        int one() {
            return 1;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Features {

        @Bean
        Loader loader() {
            return new Loader();
        }

        @Bean
        Totals totals() {
            return new Totals();
        }

        @Bean
        SelfRunning selfRunning() {
            return new SelfRunning();
        }
    }

    @Test
    void annotatedMethodsOfSeveralBeansBecomeOneNamedGraphBeanThatRuns() {
        runner.withUserConfiguration(Features.class).run(context -> {
            assertThat(context).hasNotFailed();
            TaskGraph features = context.getBean("features", TaskGraph.class);
            Scheduler s = context.getBean(Scheduler.class);
            assertThat(s.registeredGraphs()).containsKeys("features", "tiny");
            GraphRun run = s.execute(features);
            @SuppressWarnings("unchecked")
            Task<String> report = (Task<String>) features.find("report").orElseThrow();
            assertThat(run.result(report)).isEqualTo("features: 10 over 4 rows");
            assertThat(context.getBean(Totals.class).attempts).hasValue(2);
            assertThat(context.getBean(Loader.class).loads).hasValue(1);
            Task<?> load = features.find("load").orElseThrow();
            Task<?> sum = features.find("sum").orElseThrow();
            assertThat(load.priority()).isEqualTo(3);
            assertThat(sum.retry())
                    .as("@HtsTask(retries = 2), no backoff: the scheduler's default backoff")
                    .isEqualTo(RetrySpec.retries(2, (IntervalFunction) null));
            assertThat(load.retry())
                    .as("retries left at -1: the scheduler's default")
                    .isNull();
            assertThat(sum.timeLimit()).isEqualTo(io.hts.engine.fault.TimeLimitSpec.of(Duration.ofSeconds(5)));
            assertThat(sum.hasBody(Device.GPU)).isFalse();
            assertThat(context.getBean(SelfRunning.class).tiny).isSameAs(context.getBean("tiny"));
        });
    }

    static class Either {

        @HtsTask(graph = "placed", device = Placement.ANY)
        String where(TaskContext ctx) {
            return ctx.device().id();
        }

        @HtsTask(graph = "placed", device = Placement.GPU, after = "where")
        String gpu(String before, GpuTaskContext gpu) {
            return before + " then " + gpu.device().id() + ":" + gpu.deviceOrdinal();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Placed {

        @Bean
        Either either() {
            return new Either();
        }

        @Bean
        DeviceBackend fakeGpu() {
            return new FakeGpuBackend(1);
        }
    }

    @Test
    void placementGivesCpuGpuOrBothBodies() {
        runner.withUserConfiguration(Placed.class)
                .withPropertyValues("hts.scheduler.policy=gpu-first")
                .run(context -> {
                    TaskGraph placed = context.getBean("placed", TaskGraph.class);
                    assertThat(placed.find("where").orElseThrow().hasBody(Device.CPU))
                            .isTrue();
                    assertThat(placed.find("where").orElseThrow().hasBody(Device.GPU))
                            .isTrue();
                    assertThat(placed.find("gpu").orElseThrow().hasBody(Device.CPU))
                            .isFalse();
                    GraphRun run = context.getBean(Scheduler.class).execute(placed);
                    assertThat(run.result(placed.find("gpu").orElseThrow())).isEqualTo("gpu then gpu:0");
                });
    }

    // ------------------------------------------------------------------ wrong wiring

    static class UnknownDependency {

        @HtsTask(graph = "broken", after = "lod")
        long total(long[] rows) {
            return rows.length;
        }

        @HtsTask(graph = "broken")
        long[] load() {
            return new long[0];
        }
    }

    static class WrongType {

        @HtsTask(graph = "broken")
        String load() {
            return "";
        }

        @HtsTask(graph = "broken", after = "load")
        long total(long[] rows) {
            return rows.length;
        }
    }

    static class Cycle {

        @HtsTask(graph = "broken", after = "b")
        int a(int b) {
            return b;
        }

        @HtsTask(graph = "broken", after = "a")
        int b(int a) {
            return a;
        }
    }

    static class TooManyParameters {

        @HtsTask(graph = "broken")
        int a(int x) {
            return x;
        }
    }

    static class GpuContextOnCpu {

        @HtsTask(graph = "broken")
        int a(GpuTaskContext ctx) {
            return 1;
        }
    }

    static class BadTimeout {

        @HtsTask(graph = "broken", timeout = "soon")
        int a() {
            return 1;
        }
    }

    static class Duplicate {

        @HtsTask(graph = "broken", name = "x")
        int a() {
            return 1;
        }

        @HtsTask(graph = "broken", name = "x")
        int b() {
            return 2;
        }
    }

    static class TooFewParameters {
        @HtsTask(graph = "broken")
        long[] load() {
            return new long[] {1};
        }

        @HtsTask(graph = "broken", after = "load")
        long length() {
            return 0;
        }
    }

    static class BothLists {
        @HtsTask(graph = "broken")
        long[] load() {
            return new long[] {1};
        }

        @HtsTask(graph = "broken", after = "load", waitsFor = "load")
        long length(long[] rows) {
            return rows.length;
        }
    }

    static class UnknownWaitedFor {
        @HtsTask(graph = "broken")
        long[] load() {
            return new long[] {1};
        }

        @HtsTask(graph = "broken", waitsFor = "lod")
        long length() {
            return 0;
        }
    }

    /** A task that runs after another without reading its result. */
    static class Waiting {
        static final java.util.List<String> ORDER = new java.util.concurrent.CopyOnWriteArrayList<>();

        @HtsTask(graph = "waiting")
        long[] load() {
            ORDER.add("load");
            return new long[] {1, 2, 3};
        }

        @HtsTask(graph = "waiting", waitsFor = "load")
        String announce() {
            ORDER.add("announce");
            return "loaded";
        }

        @HtsTask(graph = "waiting", after = "load", waitsFor = "announce")
        int count(long[] rows) {
            ORDER.add("count");
            return rows.length;
        }
    }

    @Test
    void waitsForOrdersWithoutAParameter() {
        runner.withBean(Waiting.class).run(context -> {
            TaskGraph g = context.getBean("waiting", TaskGraph.class);
            GraphRun run = context.getBean(Scheduler.class).execute(g);
            assertThat(run.result(g.find("count").orElseThrow())).isEqualTo(3);
            assertThat(Waiting.ORDER).containsExactly("load", "announce", "count");
        });
    }

    private void fails(Class<?> bean, String... messages) {
        runner.withBean(bean).run(context -> {
            assertThat(context).hasFailed();
            Throwable root = rootOf(context);
            assertThat(root).isInstanceOf(HtsTaskDefinitionException.class);
            for (String m : messages) {
                assertThat(root).hasMessageContaining(m);
            }
            FailureAnalysis analysis = new HtsTaskDefinitionFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).startsWith("@HtsTask method ");
            assertThat(analysis.getAction()).startsWith("Fix the @HtsTask declaration of ");
        });
    }

    private static Throwable rootOf(AssertableApplicationContext context) {
        Throwable t = context.getStartupFailure();
        while (t.getCause() != null && !(t instanceof HtsTaskDefinitionException)) {
            t = t.getCause();
        }
        return t;
    }

    @Test
    void wrongWiringFailsStartUpNamingTheMethod() {
        fails(
                UnknownDependency.class,
                "UnknownDependency.total(long[])",
                "depends on 'lod'",
                "declared: [load, total]");
        fails(WrongType.class, "WrongType.total(long[])", "parameter 1 is a long[]", "returns java.lang.String");
        fails(Cycle.class, "cycle", "Cycle.a(int)", "Cycle.b(int)");
        fails(TooManyParameters.class, "TooManyParameters.a(int)", "takes 1 parameter(s) for its 0 after dependencies");
        fails(
                TooFewParameters.class,
                "TooFewParameters.length()",
                "takes 0 parameter(s) for its 1 after dependencies" + " [load]",
                "exactly one parameter per after dependency",
                "goes in waitsFor");
        fails(BothLists.class, "BothLists.length(long[])", "names 'load' in both after and waitsFor");
        fails(UnknownWaitedFor.class, "UnknownWaitedFor.length()", "depends on 'lod'");
        fails(GpuContextOnCpu.class, "GpuContextOnCpu.a(GpuTaskContext)", "use device = Placement.GPU");
        fails(BadTimeout.class, "BadTimeout.a()", "timeout = \"soon\" is not a duration");
        fails(Duplicate.class, "declares task 'x' of graph 'broken'", "Duplicate.a()");
    }
}
