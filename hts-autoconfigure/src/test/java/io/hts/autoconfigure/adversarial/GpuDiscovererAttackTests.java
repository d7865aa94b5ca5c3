package io.hts.autoconfigure.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.FeaturesApp;
import io.hts.autoconfigure.GpuDiscoverer;
import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.autoconfigure.HtsGpuAutoConfiguration;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.support.SimulatedCuda;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import tools.jackson.databind.JsonNode;

/**
 * Attacks on the {@link GpuDiscoverer} bean (declared static or not, two of them, one that throws,
 * one that returns null or no device) under each {@code hts.gpu.enabled}, and on the naming of the
 * events endpoints' run filter ({@code runId}) in the code and the docs.
 */
class GpuDiscovererAttackTests {

    private static final long MIB = 1L << 20;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsGpuAutoConfiguration.class, HtsAutoConfiguration.class))
            .withPropertyValues(
                    "hts.executor.threads=1",
                    "hts.gpu.memory-pool.initial=4MB",
                    "hts.gpu.memory-pool.maximum=16MB",
                    "hts.gpu.memory-pool.arena-size=4MB");

    // ================================================================== how it is declared

    static final AtomicInteger NON_STATIC_LOADS = new AtomicInteger();

    @Configuration
    static class NonStaticDiscoverer {

        @Bean
        GpuDiscoverer gpuDiscoverer() {
            return GpuDiscoverer.through(() -> {
                NON_STATIC_LOADS.incrementAndGet();
                return new SimulatedCuda(256 * MIB);
            });
        }
    }

    /** Declared against the advice (not static): still the one the condition and the backend use, once. */
    @Test
    void aNonStaticDiscovererIsStillTheOneUsed() {
        NON_STATIC_LOADS.set(0);
        runner.withUserConfiguration(NonStaticDiscoverer.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(MultiGpuBackend.class);
            assertThat(context.getBean(Scheduler.class).gpu()).isPresent();
            assertThat(NON_STATIC_LOADS)
                    .as("discovered once for the condition and the bean")
                    .hasValue(1);
        });
    }

    @Configuration
    static class StaticDiscoverer {

        @Bean
        static GpuDiscoverer gpuDiscoverer() {
            return GpuDiscoverer.through(() -> new SimulatedCuda(256 * MIB).withDevices(2));
        }
    }

    @Test
    void aStaticDiscovererAsDocumentedStartsEveryDevice() {
        runner.withUserConfiguration(StaticDiscoverer.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(MultiGpuBackend.class).devices()).hasSize(2);
        });
    }

    // ================================================================== two of them

    private final GpuDiscoverer oneDevice = GpuDiscoverer.through(() -> new SimulatedCuda(256 * MIB));
    private final GpuDiscoverer twoDevices = GpuDiscoverer.through(() -> new SimulatedCuda(256 * MIB).withDevices(2));

    @ParameterizedTest(name = "hts.gpu.enabled={0}")
    @ValueSource(strings = {"auto", "true"})
    void twoDiscoverersWithoutAPrimaryFailStartUpNamingBoth(String enabled) {
        runner.withBean("first", GpuDiscoverer.class, () -> oneDevice)
                .withBean("second", GpuDiscoverer.class, () -> twoDevices)
                .withPropertyValues("hts.gpu.enabled=" + enabled)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining(GpuDiscoverer.class.getName())
                            .hasMessageContaining("first")
                            .hasMessageContaining("second");
                });
    }

    @Test
    void twoDiscoverersWithoutAPrimaryAreNoProblemWhenTheGpuIsOff() {
        runner.withBean("first", GpuDiscoverer.class, () -> oneDevice)
                .withBean("second", GpuDiscoverer.class, () -> twoDevices)
                .withPropertyValues("hts.gpu.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(DeviceBackend.class);
                });
    }

    @Configuration
    static class TwoDiscoverersOnePrimary {

        @Bean
        static GpuDiscoverer oneDevice() {
            return GpuDiscoverer.through(() -> new SimulatedCuda(256 * MIB));
        }

        @Bean
        @Primary
        static GpuDiscoverer threeDevices() {
            return GpuDiscoverer.through(() -> new SimulatedCuda(256 * MIB).withDevices(3));
        }
    }

    @Test
    void ofTwoDiscoverersThePrimaryOneIsUsed() {
        runner.withUserConfiguration(TwoDiscoverersOnePrimary.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(MultiGpuBackend.class).devices()).hasSize(3);
        });
    }

    // ================================================================== one that throws, or answers nothing

    private static GpuDiscoverer throwing(AtomicInteger asked) {
        return () -> {
            asked.incrementAndGet();
            throw new IllegalStateException("discoverer broke");
        };
    }

    @ParameterizedTest(name = "hts.gpu.enabled={0}")
    @ValueSource(strings = {"auto", "true"})
    void aDiscovererThatThrowsFailsStartUpWithItsError(String enabled) {
        GpuDiscoverer throwing = throwing(new AtomicInteger());
        runner.withBean(GpuDiscoverer.class, () -> throwing)
                .withPropertyValues("hts.gpu.enabled=" + enabled)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessage("discoverer broke");
                });
    }

    @Test
    void aDiscovererThatThrowsIsNeverAskedWhenTheGpuIsOff() {
        AtomicInteger asked = new AtomicInteger();
        GpuDiscoverer throwing = throwing(asked);
        runner.withBean(GpuDiscoverer.class, () -> throwing)
                .withPropertyValues("hts.gpu.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(DeviceBackend.class);
                    assertThat(context.getBean(Scheduler.class).gpu()).isEmpty();
                });
        assertThat(asked).as("false: never asked").hasValue(0);
    }

    /** through(loader) turns a throwing loader into an unavailable result: auto runs on the CPU. */
    @Test
    void aThrowingLoaderBehindThroughIsNoGpuWithAuto() {
        GpuDiscoverer failing = GpuDiscoverer.through(() -> {
            throw new IllegalStateException("no natives here");
        });
        runner.withBean(GpuDiscoverer.class, () -> failing).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(DeviceBackend.class);
        });
        runner.withBean(GpuDiscoverer.class, () -> failing)
                .withPropertyValues("hts.gpu.enabled=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .hasStackTraceContaining("hts.gpu.enabled")
                            .hasStackTraceContaining("no natives here");
                });
    }

    @Test
    void noDeviceIsCpuOnlyWithAutoAndAFailureNamingThePropertyWithTrue() {
        AtomicInteger loads = new AtomicInteger();
        GpuDiscoverer none = GpuDiscoverer.through(() -> {
            loads.incrementAndGet();
            return new SimulatedCuda(256 * MIB).withDevices(0);
        });
        runner.withBean(GpuDiscoverer.class, () -> none).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(DeviceBackend.class);
            Scheduler s = context.getBean(Scheduler.class);
            assertThat(s.gpu()).isEmpty();
            TaskGraph g = TaskGraph.named("cpu-only");
            var t = g.task("t").cpu(ctx -> 5);
            assertThat(s.execute(g).result(t)).isEqualTo(5);
        });
        runner.withBean(GpuDiscoverer.class, () -> none)
                .withPropertyValues("hts.gpu.enabled=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .hasStackTraceContaining("hts.gpu.enabled")
                            .hasStackTraceContaining("the CUDA driver reports no device");
                });
        loads.set(0);
        runner.withBean(GpuDiscoverer.class, () -> none)
                .withPropertyValues("hts.gpu.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(DeviceBackend.class);
                });
        assertThat(loads).as("false: nothing discovered").hasValue(0);
    }

    /**
     * A discoverer written as a lambda that answers null (a user's "nothing found"): the condition
     * dereferences it. What a user gets is a bare NullPointerException from inside HTS's condition,
     * not a message naming the GpuDiscoverer bean and what it must return.
     */
    @Test
    void aDiscovererReturningNullIsReportedNamingTheBean() {
        GpuDiscoverer nothing = () -> null;
        runner.withBean("myDiscoverer", GpuDiscoverer.class, () -> nothing).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .hasStackTraceContaining("GpuDiscoverer")
                    .hasStackTraceContaining("null");
            assertThat(context.getStartupFailure()).rootCause().isNotInstanceOf(NullPointerException.class);
        });
    }

    /** A Result made by hand with no reason and no device: what does the condition say? */
    @Test
    void aHandMadeEmptyResultWithoutAReasonIsNoGpuWithAuto() {
        GpuDiscoverer empty = () -> new GpuDiscovery.Result(null, List.of(), 0, null);
        runner.withBean(GpuDiscoverer.class, () -> empty).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(DeviceBackend.class);
        });
    }

    // ================================================================== the run filter's name

    private static ConfigurableApplicationContext start() {
        return LocalHttp.server(FeaturesApp.class)
                .properties("management.endpoints.web.exposure.include=htsevents", "hts.gpu.enabled=false")
                .run();
    }

    /** Two failed runs; then the events of one of them, by ?runId= (the code's name) and by ?run= (the docs' name). */
    private static long[] twoFailedRuns(ConfigurableApplicationContext context) {
        Scheduler s = context.getBean(Scheduler.class);
        long[] ids = new long[2];
        for (int i = 0; i < 2; i++) {
            TaskGraph g = TaskGraph.named("failing-" + i);
            g.task("boom").cpu(ctx -> {
                throw new IllegalStateException("boom");
            });
            var run = s.submit(g);
            ids[i] = run.runId();
            run.future().handle((r, e) -> null).join();
        }
        return ids;
    }

    @Test
    void theRunIdFilterFiltersTheEvents() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            long[] ids = twoFailedRuns(context);
            JsonNode events = LocalHttp.getJson(context, "/actuator/htsevents?runId=" + ids[0])
                    .get("events");
            assertThat(events)
                    .isNotEmpty()
                    .allSatisfy(e -> assertThat(e.get("runId").asLong()).isEqualTo(ids[0]));
        }
    }

    @Test
    void configurationDocsNameTheRunFilterRunId() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
        String events =
                doc.lines().filter(l -> l.startsWith("| `/actuator/htsevents")).reduce("", String::concat);
        assertThat(events).contains("`runId`").doesNotContain("`run`,");
    }
}
