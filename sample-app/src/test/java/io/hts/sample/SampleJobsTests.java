package io.hts.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** A scenario whose check fails is reported in its block, the others still run, and the job fails after the summary. */
@ExtendWith(OutputCaptureExtension.class)
class SampleJobsTests {

    /** A scenario of one task. */
    private record OneTask(String label, TaskGraph graph) implements SampleScenario {

        static OneTask of(String label, boolean fails) {
            TaskGraph g = TaskGraph.named(label.replace(' ', '-'));
            g.task("check").cpu(ctx -> {
                if (fails) {
                    throw new IllegalStateException("the check found shard 3 corrupted");
                }
                return 42;
            });
            return new OneTask(label, g);
        }

        @Override
        public String description() {
            return "one task";
        }

        @Override
        public List<String> results(GraphRun run) {
            return List.of("check: 42: OK");
        }
    }

    @Test
    void aFailedCheckIsReportedInItsBlockAndFailsTheJobAfterTheSummary(CapturedOutput output) {
        SampleProperties properties = new SampleProperties(
                true,
                true,
                new SampleProperties.Features(10, 2, 1, 1, 1),
                new SampleProperties.Sweep(2, 2, 1, 1),
                new SampleProperties.Operators(List.of(8), List.of(8), 8, 1, 1),
                new SampleProperties.Headline(1, Duration.ofNanos(1_000), 1, 1, 1, 1));
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            SampleJobs jobs = new SampleJobs(
                    scheduler,
                    properties,
                    List.of(OneTask.of("(x) broken", true), OneTask.of("(y) fine", false)),
                    null); // kept running: the context is not asked to exit

            assertThatThrownBy(() -> jobs.run(null))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("scenarios failed: (x) broken (see the summary)");
        }
        assertThat(output.getOut())
                .contains("(x) broken: FAILED in ")
                .contains("    FAILED check: java.lang.IllegalStateException: the check found shard 3 corrupted")
                .contains("(y) fine: SUCCEEDED in ", "    check: 42: OK")
                .contains("==== 1 of 2 scenarios passed their checks in ");
    }
}
