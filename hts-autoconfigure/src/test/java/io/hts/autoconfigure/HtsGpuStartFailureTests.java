package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.InstanceOfAssertFactories.LIST;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.hts.autoconfigure.actuate.HtsEndpoint;
import io.hts.autoconfigure.actuate.HtsEndpointAutoConfiguration;
import io.hts.autoconfigure.health.HtsHealthContributorAutoConfiguration;
import io.hts.autoconfigure.metrics.HtsGpuMetrics;
import io.hts.autoconfigure.metrics.HtsMetricsAutoConfiguration;
import io.hts.autoconfigure.support.SimulatedGpus;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.NoDeviceException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.MultiGpuBackend;
import io.hts.gpu.exec.PartialGpuBackend;
import io.hts.gpu.exec.UnusableGpuBackend;
import io.hts.gpu.support.SimulatedCuda;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * A GPU that is there but cannot be started (here a simulated one whose first allocation fails
 * with CUDA_ERROR_ILLEGAL_ADDRESS, as on a card another process left poisoned): with
 * {@code hts.gpu.enabled=auto} the application starts on the CPU, says why once, and reports the GPU
 * in its health; with {@code true} start-up fails naming the property, the device and the error.
 */
class HtsGpuStartFailureTests {

    private static final long MIB = 1L << 20;

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    HtsGpuAutoConfiguration.class,
                    HtsAutoConfiguration.class,
                    HtsEndpointAutoConfiguration.class,
                    HtsHealthContributorAutoConfiguration.class,
                    HtsMetricsAutoConfiguration.class))
            .withPropertyValues(SimulatedGpus.SMALL_POOL)
            .withPropertyValues("management.endpoints.web.exposure.include=hts");

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeEach
    void listenToTheLog() {
        logged.start();
        root().addAppender(logged);
    }

    @AfterEach
    void stopListening() {
        root().detachAppender(logged);
    }

    private static Logger root() {
        return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }

    private List<String> warnings(Class<?> from) {
        return logged.list.stream()
                .filter(e -> e.getLevel() == Level.WARN)
                .filter(e -> from == Object.class || e.getLoggerName().equals(from.getName()))
                .map(ILoggingEvent::getFormattedMessage)
                .toList();
    }

    /** Runs the context on the simulated CUDA instead of the real discovery: the application's {@link GpuDiscoverer}. */
    private void run(WebApplicationContextRunner runner, ContextConsumer<AssertableWebApplicationContext> test) {
        SimulatedGpus.discovering(cuda, runner).run(test);
    }

    @Test
    void autoWithAGpuThatCannotStartRunsOnTheCpuAndSaysWhyOnce() {
        cuda.failNext("cuMemAlloc", 700);
        run(runner, context -> {
            assertThat(context).hasNotFailed();
            assertThat(warnings(Object.class))
                    .as("one warning, from any logger")
                    .singleElement()
                    .asString()
                    .contains(
                            "HTS GPU backend DOWN",
                            "cuda:0 Simulated GPU could not be started",
                            "cuMemAlloc",
                            "CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(context.getBean(DeviceBackend.class)).isInstanceOf(UnusableGpuBackend.class);

            Health health =
                    context.getBean("htsHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus()).as("the CPU work goes on").isEqualTo(Status.UP);
            assertThat(health.getDetails().get("gpu"))
                    .asString()
                    .startsWith("DOWN: cuda:0 Simulated GPU could not be started: cuMemAlloc")
                    .contains("CUDA_ERROR_ILLEGAL_ADDRESS");
            assertThat(context.getBean(HtsEndpoint.class).state().get("gpus"))
                    .asInstanceOf(LIST)
                    .singleElement()
                    .asInstanceOf(MAP)
                    .containsEntry("health", "DOWN")
                    .containsEntry("streams", 0);

            Scheduler s = context.getBean(Scheduler.class);
            s.setPolicy(new GpuFirstPolicy());
            TaskGraph dual = TaskGraph.named("dual");
            Task<String> both = dual.task("both").bodies(ctx -> "cpu", ctx -> "gpu");
            GraphRun run = s.execute(dual);
            assertThat(run.result(both)).isEqualTo("cpu");
            assertThat(run.profile().tasks())
                    .singleElement()
                    .extracting(t -> t.device())
                    .isEqualTo(Device.CPU);

            TaskGraph gpuOnly = TaskGraph.named("gpu-only");
            gpuOnly.task("kernel").gpu(ctx -> 1);
            assertThatThrownBy(() -> s.execute(gpuOnly))
                    .isInstanceOf(GraphRunException.class)
                    .rootCause()
                    .isInstanceOf(NoDeviceException.class)
                    .hasMessageContaining("task 'kernel' has only a GPU body")
                    .hasMessageContaining("cuda:0 Simulated GPU could not be started")
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");

            assertThat(context.getBean(HtsGpuMetrics.class))
                    .as("no memory pool to gauge")
                    .satisfies(m -> {
                        MeterRegistry registry = new SimpleMeterRegistry();
                        m.bindTo(registry);
                        assertThat(registry.find("hts.gpu.memory.reserved").gauges())
                                .isEmpty();
                    });
        });
    }

    @Test
    void requiredWithAGpuThatCannotStartFailsStartUpNamingThePropertyTheDeviceAndTheError() {
        cuda.failNext("cuMemAlloc", 700);
        run(runner.withPropertyValues("hts.gpu.enabled=true"), context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            assertThat(failure)
                    .rootCause()
                    .isInstanceOf(CudaException.class)
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
            FailureAnalysis report = new HtsFailureAnalyzer().analyze(failure);
            assertThat(report).isNotNull();
            assertThat(report.getDescription()).isEqualTo("Invalid value 'true' for property 'hts.gpu.enabled'.");
            assertThat(report.getAction())
                    .startsWith(
                            "Update your application's configuration: hts.gpu.enabled accepts"
                                    + " auto or false while a GPU cannot be started (cuda:0 Simulated GPU could not be started: cuMemAlloc")
                    .contains("CUDA_ERROR_ILLEGAL_ADDRESS");
        });
    }

    @Test
    void ofTwoGpusTheOneThatStartsIsUsedAndTheOtherReported() {
        cuda.withDevices(2);
        cuda.failNext("cuMemAlloc", 700); // cuda:0 starts first
        run(runner, context -> {
            assertThat(context).hasNotFailed();
            assertThat(warnings(HtsGpuAutoConfiguration.class))
                    .singleElement()
                    .asString()
                    .contains(
                            "HTS GPU backend DEGRADED, running on cuda:1 Simulated GPU only",
                            "cuda:0 Simulated GPU could not be started",
                            "CUDA_ERROR_ILLEGAL_ADDRESS");
            PartialGpuBackend gpus = context.getBean(PartialGpuBackend.class);
            assertThat(gpus.running())
                    .get()
                    .extracting(MultiGpuBackend::devices)
                    .asInstanceOf(LIST)
                    .hasSize(1);
            assertThat(gpus.failed())
                    .singleElement()
                    .extracting(UnusableGpuBackend::ordinal)
                    .isEqualTo(0);

            Health health =
                    context.getBean("htsHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails().get("gpu"))
                    .asString()
                    .startsWith("DEGRADED: cuda:0 Simulated GPU could not be started")
                    .contains("running: ");
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> each = (List<Map<String, Object>>)
                    context.getBean(HtsEndpoint.class).state().get("gpus");
            assertThat(each).extracting(m -> m.get("health")).first().isEqualTo("DOWN");
            assertThat(each)
                    .hasSize(2)
                    .element(1)
                    .extracting(m -> m.get("health"))
                    .isNotEqualTo("DOWN");

            TaskGraph g = TaskGraph.named("on-the-gpu");
            Task<Integer> k =
                    g.task("k").gpu(ctx -> ctx.unwrap(GpuContext.class).deviceOrdinal());
            assertThat(context.getBean(Scheduler.class).execute(g).result(k)).isEqualTo(1);

            MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(HtsGpuMetrics.class).bindTo(registry);
            assertThat(registry.find("hts.gpu.memory.reserved").gauges())
                    .singleElement()
                    .extracting(m -> m.getId().getTag("device"))
                    .isEqualTo("cuda:1");
        });
    }

    @Test
    void devicesDiscoveryFindsButCannotQueryAreReportedDownToo() {
        cuda.withDevices(2);
        cuda.failNext("cuDeviceGetName", 999);
        run(runner, context -> {
            assertThat(context).hasNotFailed();
            assertThat(warnings(Object.class))
                    .singleElement()
                    .asString()
                    .contains("2 CUDA device(s) cannot be used", "cuDeviceGetName", "CUDA_ERROR_UNKNOWN");
            assertThat(context.getBean("htsHealthIndicator", HealthIndicator.class)
                            .health()
                            .getDetails()
                            .get("gpu"))
                    .asString()
                    .startsWith("DOWN: 2 CUDA device(s) cannot be used");
        });
        cuda.failNext("cuDeviceGetName", 999);
        run(runner.withPropertyValues("hts.gpu.enabled=true"), context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .isInstanceOf(InvalidHtsPropertyException.class)
                    .hasMessageContaining("hts.gpu.enabled")
                    .hasMessageContaining("without a usable GPU")
                    .hasMessageContaining("CUDA_ERROR_UNKNOWN");
        });
    }

    /** A pool maximum above the device's memory is a configuration error: start-up fails, with auto too. */
    @Test
    void aPoolMaximumAboveTheDevicesMemoryFailsStartUpNamingTheDevicesMemory() {
        run(runner.withPropertyValues("hts.gpu.memory-pool.maximum=1GB"), context -> {
            assertThat(context).hasFailed();
            FailureAnalysis report = new HtsFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(report).isNotNull();
            assertThat(report.getDescription())
                    .isEqualTo("Invalid value '1.0 GiB' for property 'hts.gpu.memory-pool.maximum'.");
            assertThat(report.getAction())
                    .contains("at most the 256.0 MiB of memory of cuda:0 Simulated GPU")
                    .contains("such as 230.4 MiB");
        });
    }

    @Test
    void aGpuThatStartsIsUsedAsBefore() {
        run(runner, context -> {
            assertThat(context).hasNotFailed().hasSingleBean(MultiGpuBackend.class);
            assertThat(warnings(HtsGpuAutoConfiguration.class)).isEmpty();
            assertThat(context.getBean("htsHealthIndicator", HealthIndicator.class)
                            .health()
                            .getDetails()
                            .get("gpu"))
                    .asString()
                    .doesNotContain("DOWN");
        });
    }
}
