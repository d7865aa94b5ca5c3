package io.hts.autoconfigure;

import io.hts.engine.policy.PolicyType;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Locale;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;
import org.springframework.util.unit.DataSize;

/**
 * Reports an {@code hts.*} property that could not even be bound (an unknown policy, a malformed
 * duration or size) as HTS reports every bad property: the property, the value as written, where it
 * was set, and what is accepted in the form the docs use ({@code round-robin}, not
 * {@code ROUND_ROBIN}; {@code 500ms}, {@code 5s} or {@code PT5S} for a duration). Ahead of Spring
 * Boot's own analyzer, which lists enum constants and names no duration form; other properties are
 * left to it.
 */
class HtsBindFailureAnalyzer extends AbstractFailureAnalyzer<BindException> implements Ordered {

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 100;
    }

    @Override
    protected @Nullable FailureAnalysis analyze(Throwable rootFailure, BindException cause) {
        String name = cause.getName().toString();
        if (!name.startsWith("hts.")) {
            return null;
        }
        ConfigurationProperty property = cause.getProperty();
        Object value = property != null ? property.getValue() : null;
        Origin origin = property != null ? property.getOrigin() : null;
        Class<?> type = cause.getTarget().getType().resolve(Object.class);
        String accepted = accepted(type);
        return new FailureAnalysis(
                "Invalid value '" + value + "' for property '" + name + "'"
                        + (origin != null ? " (set in " + origin + ")" : "") + ".",
                "Update your application's configuration: " + name + " accepts " + accepted + ".",
                cause);
    }

    /** What a property of this type accepts, as one writes it. */
    static String accepted(Class<?> type) {
        if (type == PolicyType.class) {
            return "one of "
                    + Arrays.stream(PolicyType.values()).map(PolicyType::id).collect(Collectors.joining(", "));
        }
        if (type.isEnum()) {
            return "one of "
                    + Arrays.stream(type.getEnumConstants())
                            .map(c -> ((Enum<?>) c)
                                    .name()
                                    .toLowerCase(Locale.ROOT)
                                    .replace('_', '-'))
                            .collect(Collectors.joining(", "));
        }
        if (type == Duration.class) {
            return "a duration such as 500ms, 5s, 2m or 1h (units ns, us, ms, s, m, h, d), or ISO-8601 such as PT5S";
        }
        if (type == DataSize.class) {
            return "a size such as 512B, 64KB, 256MB or 1GB (units B, KB, MB, GB, TB)";
        }
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "a whole number";
        }
        if (type == float.class || type == Float.class || type == double.class || type == Double.class) {
            return "a number";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (Collection.class.isAssignableFrom(type)) {
            return "a comma-separated list, such as 0,1";
        }
        return "a value of type " + type.getSimpleName();
    }
}
