package io.hts.engine.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Device;
import io.hts.engine.support.FakeGpuBackend;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** docs/policies.md's choice of policies places the tasks as the page says. */
class PolicyChoiceExampleTests {

    @Test
    void theDefaultPolicyPicksTheEarliestFinishAndGpuFirstTheGpu() {
        assertThat(PolicyChoiceExample.placements(new FakeGpuBackend(2)))
                .containsExactly(
                        Map.of("small", Device.CPU, "large", Device.GPU),
                        Map.of("small", Device.GPU, "large", Device.GPU));
    }

    @Test
    void withoutAGpuNoPolicyIsAskedAndEveryTaskRunsOnTheCpu() {
        Map<String, Device> cpu = Map.of("small", Device.CPU, "large", Device.CPU);
        assertThat(PolicyChoiceExample.placements(null)).isEqualTo(List.of(cpu, cpu));
    }
}
