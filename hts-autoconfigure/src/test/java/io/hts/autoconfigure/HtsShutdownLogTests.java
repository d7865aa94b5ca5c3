package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** Issue 15 item 14: the shutdown's warning names the configured phase, the margin and the runs it cancelled. */
@ExtendWith(OutputCaptureExtension.class)
class HtsShutdownLogTests {

    @Test
    void theWarningNamesTheConfiguredPhaseTheMarginAndTheCancelledRuns(CapturedOutput output) {
        CountDownLatch started = new CountDownLatch(1);
        GraphRun[] run = new GraphRun[1];
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class))
                .withPropertyValues("spring.lifecycle.timeout-per-shutdown-phase=2s")
                .run(context -> {
                    TaskGraph g = TaskGraph.named("stuck");
                    g.task("blocked").cpu(ctx -> {
                        started.countDown();
                        while (true) {
                            ctx.checkCancelled();
                            Thread.onSpinWait();
                        }
                    });
                    run[0] = context.getBean(Scheduler.class).submit(g);
                    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                });
        assertThat(output)
                .contains("HTS: 1 run still going 1s into the shutdown"
                        + " (spring.lifecycle.timeout-per-shutdown-phase=2s, less 1s kept to cancel what is left and let the"
                        + " threads end); cancelled, their task states recorded: run " + run[0].runId()
                        + " of graph 'stuck'");
    }

    @Test
    void durationsReadAsTheyAreWritten() {
        assertThat(HtsSchedulerLifecycle.readable(Duration.ofSeconds(1))).isEqualTo("1s");
        assertThat(HtsSchedulerLifecycle.readable(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(HtsSchedulerLifecycle.readable(Duration.ofMinutes(2))).isEqualTo("2m");
        assertThat(HtsSchedulerLifecycle.readable(Duration.ofSeconds(90))).isEqualTo("90s");
    }
}
