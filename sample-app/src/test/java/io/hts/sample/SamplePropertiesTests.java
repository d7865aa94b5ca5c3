package io.hts.sample;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** A scale the sample cannot run is refused when the properties are bound, naming the property. */
class SamplePropertiesTests {

    private static void bind(String name, String value) {
        new Binder(new MapConfigurationPropertySource(Map.of(name, value))).bind("sample", SampleProperties.class);
    }

    @Test
    void aGemmSizeWhoseMatrixDoesNotFitAJavaArrayIsRefused() {
        for (String property : new String[] {"sample.operators.cpu-gemm-sizes", "sample.operators.gpu-gemm-sizes"}) {
            assertThatThrownBy(() -> bind(property, "256, 50000"))
                    .isInstanceOf(BindException.class)
                    .rootCause()
                    .hasMessageContaining("sample.operators")
                    .hasMessageContaining("46340");
        }
    }

    @Test
    void aSweepGridOfMoreSimulationsThanAGraphCanHoldIsRefused() {
        assertThatThrownBy(() -> new Binder(new MapConfigurationPropertySource(
                                Map.of("sample.sweep.beta-steps", "100000", "sample.sweep.gamma-steps", "100000")))
                        .bind("sample", SampleProperties.class))
                .isInstanceOf(BindException.class)
                .rootCause()
                .hasMessageContaining("sample.sweep");
    }
}
