package io.hts.autoconfigure.metrics;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * {@code hts.metrics.enabled}, read the way {@code HtsProperties} binds it (so {@code yes}, {@code on}
 * and {@code 1} mean true here too, where {@code @ConditionalOnBooleanProperty} would take only
 * {@code true}); unset: enabled. A value that cannot be read is left to the properties' binding,
 * which fails the start naming the property.
 */
final class OnHtsMetricsEnabledCondition extends SpringBootCondition {

    static final String PROPERTY = "hts.metrics.enabled";

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        boolean enabled;
        try {
            enabled = Binder.get(context.getEnvironment())
                    .bind(PROPERTY, Boolean.class)
                    .orElse(true);
        } catch (BindException ex) {
            return ConditionOutcome.match(PROPERTY + " cannot be read; its binding reports it");
        }
        return enabled
                ? ConditionOutcome.match(PROPERTY + " is true")
                : ConditionOutcome.noMatch(PROPERTY + " is false");
    }
}
