package io.hts.autoconfigure;

import io.hts.engine.run.SchedulerBuilder;

/**
 * Adjusts the auto-configured {@link io.hts.engine.run.Scheduler} before it is built, without
 * replacing it: every bean of this type is applied, in {@link org.springframework.core.annotation.Order}
 * (or {@link org.springframework.core.Ordered}) order, after the {@code hts.*} properties and the
 * application's policy, listeners, task scopes, Resilience4j registries and GPU backend were set,
 * so a customizer sees them and what it sets wins. A customizer that throws fails the context's
 * start with an error that names its bean.
 *
 * <pre>{@code
 * @Bean
 * SchedulerBuilderCustomizer moreRetainedRuns() {
 *     return builder -> builder.retainedRuns(100);
 * }
 * }</pre>
 */
@FunctionalInterface
public interface SchedulerBuilderCustomizer {

    /**
     * Customizes the builder.
     *
     * @param builder the builder, already configured from {@code hts.*}
     */
    void customize(SchedulerBuilder builder);
}
