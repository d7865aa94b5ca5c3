package io.hts.gpu.device;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test class that needs a real GPU. Where none can be used (CI, the development box) the class is
 * reported skipped with the reason, instead of aborting in {@code @BeforeAll} and showing as no
 * tests at all; with {@code HTS_GPU_TESTS=required} (the GPU machine's kit) it runs, and
 * {@link GpuRequirement#gpu()} fails it when no GPU can be used.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresGpu.Condition.class)
@interface RequiresGpu {

    /** Enabled with a GPU, or when one is required; otherwise disabled with the reason. */
    final class Condition implements ExecutionCondition {

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            String missing = GpuRequirement.missing();
            if (missing == null) {
                return ConditionEvaluationResult.enabled("a GPU is here");
            }
            if (GpuRequirement.required()) {
                return ConditionEvaluationResult.enabled("HTS_GPU_TESTS=required: the test fails without a GPU");
            }
            return ConditionEvaluationResult.disabled("no GPU: " + missing); // no @BeforeAll runs either
        }
    }
}
