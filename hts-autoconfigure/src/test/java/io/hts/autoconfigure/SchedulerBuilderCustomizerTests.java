package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.policy.RoundRobinPolicy;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.Scheduler;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * {@link SchedulerBuilderCustomizer} beans adjust the auto-configured scheduler: in order, after
 * the properties (what they set wins, what they leave stays), never for a scheduler the
 * application defines itself; one that throws fails the start with its exception.
 */
class SchedulerBuilderCustomizerTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class));

    @Test
    void customizersApplyInOrderAfterTheProperties() {
        runner.withUserConfiguration(TwoCustomizers.class)
                .withPropertyValues(
                        "hts.executor.threads=3",
                        "hts.scheduler.policy=round-robin",
                        "hts.scheduler.failure-mode=continue")
                .run(context -> {
                    Scheduler s = context.getBean(Scheduler.class);
                    assertThat(context.getBean("applied", List.class)).containsExactly("first", "second");
                    assertThat(s.parallelism())
                            .as("the second customizer's threads(5) wins")
                            .isEqualTo(5);
                    assertThat(s.profilingEnabled())
                            .as("the first customizer's profiling(false) stays")
                            .isFalse();
                    assertThat(s.policy())
                            .as("hts.scheduler.policy, left alone")
                            .isInstanceOf(RoundRobinPolicy.class);
                    assertThat(s.defaultFailureMode()).isEqualTo(FailureMode.CONTINUE);
                });
    }

    @Test
    void aCustomizerThatThrowsFailsTheStartWithItsException() {
        runner.withBean(SchedulerBuilderCustomizer.class, () -> builder -> {
                    throw new IllegalStateException("no scheduler for this test");
                })
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessage("no scheduler for this test"));
    }

    @Test
    void anApplicationsOwnSchedulerIsNotCustomized() {
        List<String> applied = new ArrayList<>();
        runner.withBean(Scheduler.class, () -> Scheduler.builder().threads(1).build())
                .withBean(SchedulerBuilderCustomizer.class, () -> builder -> applied.add("customized"))
                .run(context -> {
                    assertThat(context.getBean(Scheduler.class).parallelism()).isEqualTo(1);
                    assertThat(applied).isEmpty();
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoCustomizers {

        @Bean
        List<String> applied() {
            return new ArrayList<>();
        }

        @Bean
        @Order(2)
        SchedulerBuilderCustomizer second(List<String> applied) {
            return builder -> {
                applied.add("second");
                builder.threads(5);
            };
        }

        @Bean
        @Order(1)
        SchedulerBuilderCustomizer first(List<String> applied) {
            return builder -> {
                applied.add("first");
                builder.threads(2).profiling(false);
            };
        }
    }
}
