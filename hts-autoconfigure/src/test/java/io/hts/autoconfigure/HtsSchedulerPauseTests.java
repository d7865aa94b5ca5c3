package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.Scheduler;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Spring Framework 7's test context cache pauses the contexts it is not using and restarts them when
 * a test asks for one again: the scheduler survives the pause (it used to be shut down by it, and
 * the next test class on that context found it refusing runs); closing the context still shuts it down.
 */
class HtsSchedulerPauseTests {

    @Test
    void aPausedAndRestartedContextStillRunsGraphsAndItsCloseShutsTheSchedulerDown() {
        AtomicReference<Scheduler> scheduler = new AtomicReference<>();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class))
                .run(context -> {
                    scheduler.set(context.getBean(Scheduler.class));
                    context.getSourceApplicationContext().pause();
                    context.getSourceApplicationContext().restart();

                    assertThat(scheduler.get().isShutdown()).isFalse();
                    TaskGraph g = TaskGraph.named("after-a-pause");
                    Task<Integer> one = g.task("one").cpu(ctx -> 1);
                    assertThat(scheduler.get().execute(g).result(one)).isEqualTo(1);
                });
        assertThat(scheduler.get().isShutdown()).isTrue();
    }
}
