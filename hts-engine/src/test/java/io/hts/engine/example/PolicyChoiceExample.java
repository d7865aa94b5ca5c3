package io.hts.engine.example;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.policy.PolicyType;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The choice of a policy, declared costs and a switch at run time, as docs/policies.md shows them.
 * {@code DocExamples} checks that the page shows it as written; {@code PolicyChoiceExampleTests}
 * runs it with a GPU backend and without.
 */
public final class PolicyChoiceExample {

    private PolicyChoiceExample() {}

    // Shown in docs/policies.md as written (DocExamples compares them): not reformatted.
    // spotless:off
    /** Where each task ran: under the default policy, then under gpu-first. */
    static List<Map<String, Device>> placements(@Nullable DeviceBackend gpu) {
        TaskGraph graph = TaskGraph.named("scoring");
        Task<Device> small = graph.task("small").cost(Device.CPU, Duration.ofMillis(1)).cost(Device.GPU, Duration.ofMillis(5))
                .bodies(ctx -> ctx.device(), ctx -> ctx.device());       // each body returns where it ran
        Task<Device> large = graph.task("large").cost(Device.CPU, Duration.ofMillis(80)).cost(Device.GPU, Duration.ofMillis(4))
                .bodies(ctx -> ctx.device(), ctx -> ctx.device());

        try (Scheduler scheduler = Scheduler.builder().gpuBackend(gpu).policy(PolicyType.fromId("default").create()).build()) {
            GraphRun byCost = scheduler.execute(graph);     // small on the CPU, large on the GPU: the earliest finish
            scheduler.setPolicy(new GpuFirstPolicy());      // tasks placed from now on: the GPU whenever it is usable
            GraphRun gpuFirst = scheduler.execute(graph);   // both on the GPU
            return List.of(Map.of("small", byCost.result(small), "large", byCost.result(large)),
                    Map.of("small", gpuFirst.result(small), "large", gpuFirst.result(large)));
        }
    }
    // spotless:on
}
