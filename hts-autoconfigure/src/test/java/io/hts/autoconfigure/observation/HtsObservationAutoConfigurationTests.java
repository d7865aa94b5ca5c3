package io.hts.autoconfigure.observation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class HtsObservationAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(HtsObservationAutoConfiguration.class, HtsAutoConfiguration.class));

    @Test
    void eachRunIsOneObservationWithItsGraphOutcomeAndError() {
        runner.withUserConfiguration(Observed.class).run(context -> {
            Recorder recorder = context.getBean(Recorder.class);
            Scheduler s = context.getBean(Scheduler.class);
            TaskGraph ok = TaskGraph.named("observed");
            ok.task("a").cpu(ctx -> 1);
            long id = s.execute(ok).runId();
            TaskGraph bad = TaskGraph.named("broken");
            bad.task("boom").cpu(ctx -> {
                throw new IllegalStateException("boom");
            });
            assertThatThrownBy(() -> s.execute(bad)).isInstanceOf(GraphRunException.class);
            await().until(() -> recorder.stopped.size() == 2);
            Observation.Context first = recorder.stopped.get(0);
            assertThat(first.getName()).isEqualTo("hts.graph.run");
            assertThat(first.getContextualName()).isEqualTo("hts observed");
            assertThat(first.getLowCardinalityKeyValues())
                    .contains(KeyValue.of("graph", "observed"), KeyValue.of("outcome", "succeeded"));
            assertThat(first.getHighCardinalityKeyValue("run.id").getValue()).isEqualTo(Long.toString(id));
            assertThat(first.getError()).isNull();
            Observation.Context second = recorder.stopped.get(1);
            assertThat(second.getLowCardinalityKeyValues()).contains(KeyValue.of("outcome", "failed"));
            assertThat(second.getError()).isInstanceOf(GraphRunException.class).hasMessageContaining("boom");
            assertThat(context.getBean(HtsRunObservations.class).openRuns()).isZero();
        });
    }

    /** Issue 15 item 7: a body runs with its run's observation current; with hts.observation.tasks, its own. */
    @Test
    void bodiesRunInsideTheirRunsObservationOrTheirOwn() {
        runner.withUserConfiguration(Observed.class).run(context -> {
            ObservationRegistry registry = context.getBean(ObservationRegistry.class);
            Scheduler s = context.getBean(Scheduler.class);
            List<String> current = new CopyOnWriteArrayList<>();
            TaskGraph g = TaskGraph.named("traced");
            g.task("a").cpu(ctx -> {
                Observation o = registry.getCurrentObservation();
                current.add(
                        o == null
                                ? "none"
                                : o.getContext().getName() + " "
                                        + o.getContext()
                                                .getHighCardinalityKeyValue("run.id")
                                                .getValue());
                return 1;
            });
            long id = s.execute(g).runId();
            assertThat(current).containsExactly("hts.graph.run " + id);
        });
        runner.withUserConfiguration(Observed.class)
                .withPropertyValues("hts.observation.tasks=true")
                .run(context -> {
                    ObservationRegistry registry = context.getBean(ObservationRegistry.class);
                    Recorder recorder = context.getBean(Recorder.class);
                    Scheduler s = context.getBean(Scheduler.class);
                    List<String> current = new CopyOnWriteArrayList<>();
                    TaskGraph g = TaskGraph.named("traced");
                    g.task("a").cpu(ctx -> {
                        Observation o = registry.getCurrentObservation();
                        current.add(o.getContext().getName() + " parent "
                                + o.getContext()
                                        .getParentObservation()
                                        .getContextView()
                                        .getName());
                        return 1;
                    });
                    s.execute(g);
                    assertThat(current).containsExactly("hts.task parent hts.graph.run");
                    await().until(() ->
                            recorder.stopped.stream().anyMatch(c -> c.getName().equals("hts.task")));
                });
    }

    @Test
    void withoutAnObservationRegistryThereIsNoListener() {
        runner.run(context ->
                assertThat(context).doesNotHaveBean(HtsRunObservations.class).hasSingleBean(Scheduler.class));
        runner.withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
                .withUserConfiguration(Observed.class)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(HtsRunObservations.class));
    }

    static final class Recorder implements ObservationHandler<Observation.Context> {

        final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

        @Override
        public void onStop(Observation.Context context) {
            stopped.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Observed {

        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean
        ObservationRegistry observationRegistry(Recorder recorder) {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(recorder);
            return registry;
        }
    }
}
