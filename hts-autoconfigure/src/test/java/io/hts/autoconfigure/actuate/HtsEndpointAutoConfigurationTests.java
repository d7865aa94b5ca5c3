package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.engine.run.Scheduler;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

class HtsEndpointAutoConfigurationTests {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class, HtsEndpointAutoConfiguration.class));

    @Test
    void exposedEndpointsAreDefined() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=hts,htsevents,htsprofiler")
                .run(context -> assertThat(context)
                        .hasSingleBean(HtsEndpoint.class)
                        .hasSingleBean(HtsEventsEndpoint.class)
                        .hasSingleBean(HtsProfilerEndpoint.class));
    }

    @Test
    void endpointsNotExposedAreNotDefined() {
        runner.run(context -> assertThat(context)
                .doesNotHaveBean(HtsEndpoint.class)
                .doesNotHaveBean(HtsEventsEndpoint.class)
                .doesNotHaveBean(HtsProfilerEndpoint.class));
    }

    @Test
    void withoutActuatorThereAreNoEndpointsAndTheSchedulerStillWorks() {
        runner.withClassLoader(new FilteredClassLoader(Endpoint.class))
                .withPropertyValues("management.endpoints.web.exposure.include=*")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(Scheduler.class)
                        .doesNotHaveBean(HtsEndpoint.class));
    }

    @Test
    void anApplicationsEndpointBeanWins() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=hts")
                .withBean("myHts", HtsEndpoint.class)
                .run(context ->
                        assertThat(context).hasSingleBean(HtsEndpoint.class).hasBean("myHts"));
    }

    @Test
    void theStateListsEachGpu() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=hts")
                .withBean(io.hts.engine.exec.DeviceBackend.class, () -> new io.hts.engine.support.FakeGpuBackend(3))
                .run(context -> {
                    Object gpus = context.getBean(HtsEndpoint.class).state().get("gpus");
                    assertThat(gpus)
                            .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
                            .singleElement()
                            .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                            .containsEntry("health", "UP")
                            .containsEntry("streams", 3);
                });
    }
}
