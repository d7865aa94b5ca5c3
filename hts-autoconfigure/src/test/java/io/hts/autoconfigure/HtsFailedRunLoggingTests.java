package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** hts.scheduler.failed-runs-logged-per-minute: a failed run is logged once at WARN, unless set to 0. */
@ExtendWith(OutputCaptureExtension.class)
class HtsFailedRunLoggingTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class));

    private static void failOnce(Scheduler s, String graph) {
        TaskGraph g = TaskGraph.named(graph);
        g.task("load").cpu(ctx -> {
            throw new IllegalStateException("the source is gone");
        });
        GraphRun run = s.submit(g);
        assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
    }

    @Test
    void aFailedRunIsLoggedAtWarnByDefault(CapturedOutput output) {
        runner.run(context -> failOnce(context.getBean(Scheduler.class), "forgotten"));
        assertThat(output)
                .contains("WARN")
                .contains("io.hts.engine.run.FailedRunLog")
                .contains("of graph 'forgotten' failed")
                .contains("1 failed ('load': java.lang.IllegalStateException: the source is gone)")
                .contains("java.lang.IllegalStateException: the source is gone");
    }

    @Test
    void zeroTurnsItOff(CapturedOutput output) {
        runner.withPropertyValues("hts.scheduler.failed-runs-logged-per-minute=0")
                .run(context -> failOnce(context.getBean(Scheduler.class), "quiet"));
        assertThat(output).doesNotContain("of graph 'quiet'");
    }

    @Test
    void aNegativeLimitFailsStartUpNamingTheProperty() {
        runner.withPropertyValues("hts.scheduler.failed-runs-logged-per-minute=-1")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .isInstanceOf(InvalidHtsPropertyException.class)
                        .hasMessageContaining("hts.scheduler.failed-runs-logged-per-minute")
                        .hasMessageContaining("-1")
                        .hasMessageContaining("0 (none logged) or more"));
    }
}
