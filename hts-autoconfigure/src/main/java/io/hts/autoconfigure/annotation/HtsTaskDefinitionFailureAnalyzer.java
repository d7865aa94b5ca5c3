package io.hts.autoconfigure.annotation;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports an {@link HtsTask} method that cannot become a task: the method and what is wrong. */
class HtsTaskDefinitionFailureAnalyzer extends AbstractFailureAnalyzer<HtsTaskDefinitionException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, HtsTaskDefinitionException cause) {
        return new FailureAnalysis(
                cause.getMessage(), "Fix the @HtsTask declaration of " + cause.method() + ".", cause);
    }
}
