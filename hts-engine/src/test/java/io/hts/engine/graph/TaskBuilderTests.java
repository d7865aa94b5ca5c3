package io.hts.engine.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a builder's settings make of a task, and the edges of what each setting accepts. */
class TaskBuilderTests {

    @Test
    void aTaskKeepsTheSettingsItWasBuiltWith() {
        TaskGraph g = TaskGraph.named("g");
        TaskBuilder b = g.task("kernel");
        assertThat(b.name()).isEqualTo("kernel");
        Task<Integer> t = b.priority(5)
                .onGpu(1)
                .retries(2)
                .cost(Device.GPU, Duration.ofMillis(3))
                .resource("io", 2)
                .bodies(ctx -> 1, ctx -> 2);
        assertThat(t.priority()).isEqualTo(5);
        assertThat(t.gpuOrdinal()).isEqualTo(1);
        assertThat(t.retry()).isNotNull();
        assertThat(t.costNanos(Device.GPU)).isEqualTo(3_000_000);
        assertThat(t.estimatedCost(Device.GPU)).isEqualTo(Duration.ofMillis(3));
        assertThat(t.costNanos(Device.CPU)).as("declared for the GPU only").isEqualTo(-1);
        assertThat(t.estimatedCost(Device.CPU)).isNull();
        assertThat(t.resources()).containsExactly(Map.entry("io", 2L));
        assertThat(t.hasBody(Device.CPU)).isTrue();
        assertThat(t.hasBody(Device.GPU)).isTrue();
        assertThat(t.isBarrier()).isFalse();
        assertThat(t.tasks()).containsExactly(t);
    }

    @Test
    void aTaskWithoutSettingsHasTheDefaults() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> cpuOnly = g.task("plain").cpu(ctx -> 1);
        assertThat(cpuOnly.priority()).isZero();
        assertThat(cpuOnly.gpuOrdinal()).isEqualTo(-1);
        assertThat(cpuOnly.retry()).isNull();
        assertThat(cpuOnly.timeLimit()).isNull();
        assertThat(cpuOnly.resources()).isEmpty();
        assertThat(cpuOnly.hasBody(Device.CPU)).isTrue();
        assertThat(cpuOnly.hasBody(Device.GPU)).isFalse();
        Task<Integer> gpuOnly = g.task("kernel").gpu(ctx -> 2);
        assertThat(gpuOnly.hasBody(Device.CPU)).isFalse();
        assertThat(gpuOnly.hasBody(Device.GPU)).isTrue();
        assertThat(g.barrier("join").task().isBarrier()).isTrue();
    }

    @Test
    void aCostOnOneDeviceLeavesTheOtherAndOneForBothSetsBoth() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> cpu = g.task("cpu").cost(Device.CPU, Duration.ofNanos(7)).cpu(ctx -> 1);
        assertThat(cpu.costNanos(Device.CPU)).isEqualTo(7);
        assertThat(cpu.costNanos(Device.GPU)).isEqualTo(-1);
        Task<Integer> both = g.task("both").cost(Duration.ZERO).cpu(ctx -> 1);
        assertThat(both.estimatedCost(Device.CPU)).as("zero is an estimate").isEqualTo(Duration.ZERO);
        assertThat(both.estimatedCost(Device.GPU)).isEqualTo(Duration.ZERO);
        Task<Integer> longest =
                g.task("longest").cost(Duration.ofNanos(Long.MAX_VALUE)).cpu(ctx -> 1);
        assertThat(longest.costNanos(Device.CPU)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void theLowestAcceptedValuesAreAccepted() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> t = g.task("t").priority(0).resource("io", 1).cpu(ctx -> 1);
        assertThat(t.priority()).isZero();
        assertThat(t.resources()).containsEntry("io", 1L);
    }

    @Test
    void aResourceDeclaredTwiceAddsUpAndRefusesToOverflow() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> t = g.task("t").resource("io", 2).resource("io", 3).cpu(ctx -> 1);
        assertThat(t.resources()).containsExactly(Map.entry("io", 5L));
        Task<Integer> full = g.task("full")
                .resource("mem", Long.MAX_VALUE - 1)
                .resource("mem", 1)
                .cpu(ctx -> 1);
        assertThat(full.resources()).containsEntry("mem", Long.MAX_VALUE);
        TaskBuilder over = g.task("over").resource("mem", Long.MAX_VALUE - 1);
        assertThatThrownBy(() -> over.resource("mem", 2))
                .isInstanceOfSatisfying(
                        GraphValidationException.class,
                        ex -> assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.INVALID_SETTING))
                .hasMessage("task 'over' of graph 'g': amount of resource 'mem' declared twice adds up past "
                        + Long.MAX_VALUE + " (" + (Long.MAX_VALUE - 1) + " + 2); declare it once, with the amount the"
                        + " task needs");
    }

    @Test
    void everyFormOfRetriesRefusesANegativeCountNamingTheTask() {
        TaskGraph g = TaskGraph.named("g");
        assertThatThrownBy(() -> g.task("plain").retries(-1))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'plain'")
                .hasMessageContaining("was -1");
        assertThatThrownBy(() -> g.task("backoff").retries(-2, IntervalFunction.of(Duration.ofMillis(1))))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'backoff'")
                .hasMessageContaining("was -2");
        assertThatThrownBy(() -> g.task("fixed").retries(-3, Duration.ofMillis(1)))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("task 'fixed'")
                .hasMessageContaining("was -3");
        assertThat(g.size()).isZero();
    }

    @Test
    void aNullDependencyInACollectionIsRefusedNamingTheTask() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        assertThatNullPointerException()
                .isThrownBy(() -> g.task("b").after(Arrays.asList(a, null)))
                .withMessage("task 'b': a dependency is null");
    }

    @Test
    void dependenciesAddedOneByOneAfterCreationAreAllKept() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> last = g.task("last").cpu(ctx -> 0);
        for (int i = 0; i < 9; i++) {
            last.after(g.task("up" + i).cpu(ctx -> 1));
        }
        GraphTopology t = g.compile();
        assertThat(t.inDegree(last.index())).isEqualTo(9);
        assertThat(t.predecessorNames(last.index())).startsWith("up0").endsWith("up8");
    }
}
