package io.hts.engine.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.FaultTolerance;
import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/**
 * The refusals of the graph and scheduler builders that no other test makes: each names the
 * offending task, graph or setting, and what would be accepted, and leaves the graph as it was.
 */
class BuilderRefusalTests {

    private static void invalidSetting(ThrowingRunnable call, String... fragments) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(
                        GraphValidationException.class,
                        ex -> assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.INVALID_SETTING))
                .hasMessageContainingAll(fragments);
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void blankNamesAreRefusedForGraphsTasksGroupsAndBarriers() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> TaskGraph.named(" "))
                .withMessage("a graph name must not be blank");
        assertThatNullPointerException().isThrownBy(() -> TaskGraph.named(null)).withMessage("name");
        TaskGraph g = TaskGraph.named("g");
        invalidSetting(() -> g.task(""), "graph 'g'", "a task name must not be blank");
        invalidSetting(() -> g.task("\t"), "graph 'g'", "must not be blank");
        invalidSetting(() -> g.group(" ", 2, (i, t) -> t.cpu(ctx -> i)), "graph 'g'", "must not be blank");
        invalidSetting(() -> g.barrier("  "), "graph 'g'", "must not be blank");
        assertThat(g.size()).isZero();
    }

    @Test
    void aNegativeGpuOrdinalIsRefusedNamingTheTask() {
        TaskGraph g = TaskGraph.named("g");
        invalidSetting(
                () -> g.task("kernel").onGpu(-1), "task 'kernel' of graph 'g'", "a GPU ordinal is 0 or more, was -1");
        g.task("kernel").onGpu(0).gpu(ctx -> 1);
        assertThat(g.find("kernel")).isPresent();
    }

    @Test
    void aBuilderAddsOneTaskAndRefusesASecondBody() {
        TaskGraph g = TaskGraph.named("g");
        TaskBuilder b = g.task("once");
        Task<Integer> first = b.cpu(ctx -> 1);
        assertThatIllegalStateException()
                .isThrownBy(() -> b.cpu(ctx -> 2))
                .withMessage("task 'once' has already been added; a builder adds one task");
        assertThatIllegalStateException().isThrownBy(() -> b.gpu(ctx -> 2)).withMessageContaining("task 'once'");
        assertThat(g.tasks()).containsExactly(first);
    }

    @Test
    void aGroupMemberFunctionReturningAnotherBuildersTaskIsRefusedAndLeavesNothing() {
        TaskGraph g = TaskGraph.named("g");
        Task<Integer> loose = g.task("loose").cpu(ctx -> 0);
        assertThatThrownBy(() -> g.group("grp", 3, (i, t) -> {
                    Task<Integer> own = t.cpu(ctx -> i);
                    return i == 1 ? loose : own;
                }))
                .isInstanceOfSatisfying(GraphValidationException.class, ex -> {
                    assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.MISSING_BODY);
                    assertThat(ex.tasks()).containsExactly("grp[1]");
                })
                .hasMessageContaining("group 'grp' member 'grp[1]'")
                .hasMessageContaining("return the task built by the builder it was given");
        assertThat(g.tasks())
                .as("the group and its members are gone, the earlier task stays")
                .containsExactly(loose);
        assertThat(g.find("grp[0]")).isEmpty();
        TaskGroup<Integer> again = g.group("grp", 2, (i, t) -> t.cpu(ctx -> i));
        assertThat(again.size()).as("the name is free again").isEqualTo(2);
    }

    @Test
    void nullDependenciesAreRefusedNamingTheTask() {
        TaskGraph g = TaskGraph.named("g");
        assertThatNullPointerException()
                .isThrownBy(() -> g.task("t").after((Dependency) null))
                .withMessage("task 't': a dependency is null");
        assertThatNullPointerException()
                .isThrownBy(() -> g.task("t").after((String) null))
                .withMessage("task 't': a dependency name is null");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        assertThatNullPointerException()
                .isThrownBy(() -> a.after((Dependency) null))
                .withMessage("task 'a': a dependency is null");
    }

    @Test
    void aBlankRetryOrTimeLimiterInstanceNameIsRefusedNamingTheTask() {
        TaskGraph g = TaskGraph.named("g");
        invalidSetting(() -> g.task("r").retry(" "), "task 'r' of graph 'g'", "retry instance name must not be blank");
        invalidSetting(
                () -> g.task("t").timeLimiter(""),
                "task 't' of graph 'g'",
                "time limiter instance name must not be blank");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> RetrySpec.named(" "))
                .withMessageContaining("retry instance name must not be blank");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> TimeLimitSpec.named(" "))
                .withMessageContaining("time limiter instance name must not be blank");
    }

    @Test
    void aNamedTimeLimiterWithoutARegistryIsRefusedAtSubmissionNamingTheTaskAndTheFix() {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("g");
            g.task("slow").timeLimiter("hts-cpu").cpu(ctx -> 1);
            assertThatThrownBy(() -> s.submit(g))
                    .isInstanceOfSatisfying(GraphValidationException.class, ex -> {
                        assertThat(ex.problem()).isEqualTo(GraphValidationException.Problem.INVALID_SETTING);
                        assertThat(ex.tasks()).containsExactly("slow");
                    })
                    .hasMessageContainingAll(
                            "task 'slow' of graph 'g'",
                            "time limiter 'hts-cpu'",
                            "no TimeLimiterRegistry",
                            "timeLimiterRegistry(",
                            "declare a timeout on the task");
            TaskGraph ok = TaskGraph.named("ok");
            ok.task("a").cpu(ctx -> 1);
            assertThat(s.execute(ok).status()).as("the scheduler goes on").isEqualTo(RunStatus.SUCCEEDED);
        }
    }

    @Test
    void faultToleranceDefaultsAndSpecsOutOfRangeAreRefusedSayingTheRange() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> FaultTolerance.builder().defaultBackoff(Duration.ofMillis(-1)))
                .withMessageStartingWith("default retry backoff must be between 0 and 36525 days")
                .withMessageContaining("PT-0.001S");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> RetrySpec.retries(-2, Duration.ofMillis(1)))
                .withMessageContaining("retries must be between 0 and 2147483646, was -2");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> RetrySpec.retries(1, Duration.ofMillis(-3)))
                .withMessageContaining("retry backoff must be between 0 and 36525 days");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> TimeLimitSpec.of(Duration.ZERO))
                .withMessage(
                        "timeout must be between 1 ms and 36525 days (100 years), was PT0S; use noTimeout() for none");
    }

    @Test
    void aGpuBackendServingTheCpuIsRefusedSayingTheDeviceExpected() {
        DeviceBackend cpuBackend = new ScriptedBackend(1, (be, task) -> {}) {
            @Override
            public Device device() {
                return Device.CPU; // a backend for the other device
            }
        };
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Scheduler.builder().gpuBackend(cpuBackend))
                .withMessage("the GPU backend serves CPU, not GPU");
    }

    @Test
    void aSubmissionAfterShutdownIsRefusedNamingTheGraph() {
        Scheduler s = Scheduler.builder().threads(1).build();
        s.close();
        TaskGraph g = TaskGraph.named("late");
        g.task("a").cpu(ctx -> 1);
        assertThatThrownBy(() -> s.submit(g))
                .isInstanceOf(RejectedExecutionException.class)
                .hasMessage("the scheduler is shut down; a run of graph 'late' was not accepted");
        assertThat(g.isFrozen())
                .as("a refused submission does not freeze the graph")
                .isFalse();
    }
}
