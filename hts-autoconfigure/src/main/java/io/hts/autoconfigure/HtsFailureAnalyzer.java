package io.hts.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports an invalid {@code hts.*} property at start-up: the property, the value, what is accepted. */
class HtsFailureAnalyzer extends AbstractFailureAnalyzer<InvalidHtsPropertyException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidHtsPropertyException cause) {
        return new FailureAnalysis(
                "Invalid value '" + cause.value() + "' for property '" + cause.property() + "'.",
                "Update your application's configuration: " + cause.property() + " accepts " + cause.accepted() + ".",
                cause);
    }
}
