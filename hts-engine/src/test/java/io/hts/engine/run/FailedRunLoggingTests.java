package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.support.CapturedErr;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A run that does not succeed is logged once when it ends (slf4j-simple writes to System.err in
 * these tests): a failed one at WARN with its failed and cancelled tasks and its first cause's
 * stack, a cancelled one at INFO, at most the configured number a minute, and never at the cost of
 * the run's end.
 */
class FailedRunLoggingTests {

    @RegisterExtension
    final CapturedErr err = new CapturedErr();

    /** prepare -> boom (throws) -> child -> grandchild. */
    private static TaskGraph failing(String name) {
        TaskGraph g = TaskGraph.named(name);
        Task<Integer> prepare = g.task("prepare").cpu(ctx -> 1);
        Task<Integer> boom = g.task("boom").after(prepare).cpu(ctx -> {
            throw new IllegalStateException("bad input in row 7");
        });
        Task<Integer> child = g.task("child").after(boom).cpu(ctx -> 2);
        g.task("grandchild").after(child).cpu(ctx -> 3);
        return g;
    }

    @Test
    void aFailedRunIsLoggedOnceAtWarnWithItsTasksAndFirstCause() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.submit(failing("etl"));
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
        }
        String out = err.text();
        assertThat(err.count("of graph 'etl' failed")).as(out).isEqualTo(1);
        assertThat(out)
                .contains("WARN io.hts.engine.run.FailedRunLog - HTS run ")
                .contains(
                        "; of its 4 tasks, 1 failed ('boom': java.lang.IllegalStateException: bad input in row 7), 2 cancelled"
                                + " [child, grandchild]; first cause:")
                .contains("java.lang.IllegalStateException: bad input in row 7")
                .contains("at io.hts.engine.run.FailedRunLoggingTests");
    }

    @Test
    void aCancelledRunIsLoggedAtInfoAndASucceededOneNotAtAll() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            s.execute(failingFree("fine"));
            CountDownLatch started = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("stopped");
            g.task("wait").cpu(ctx -> {
                started.countDown();
                while (!ctx.isCancelled()) {
                    Thread.onSpinWait();
                }
                return 0;
            });
            GraphRun run = s.submit(g);
            started.await();
            run.cancel();
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
        }
        String out = err.text();
        assertThat(out)
                .contains("INFO io.hts.engine.run.FailedRunLog - HTS run ")
                .contains("of graph 'stopped' was cancelled")
                .doesNotContain("graph 'fine'");
    }

    private static TaskGraph failingFree(String name) {
        TaskGraph g = TaskGraph.named(name);
        g.task("ok").cpu(ctx -> 1);
        return g;
    }

    @Test
    void atMostTheConfiguredNumberOfRunsIsLoggedAMinute() {
        try (Scheduler s =
                Scheduler.builder().threads(2).failedRunsLoggedPerMinute(2).build()) {
            for (int i = 0; i < 5; i++) {
                GraphRun run = s.submit(failing("limited"));
                assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            }
        }
        assertThat(err.count("of graph 'limited' failed")).isEqualTo(2);
    }

    @Test
    void zeroLogsNothingAndNegativeIsRefusedNamingTheSetting() {
        try (Scheduler s =
                Scheduler.builder().threads(2).failedRunsLoggedPerMinute(0).build()) {
            GraphRun run = s.submit(failing("silent"));
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
        }
        assertThat(err.text()).doesNotContain("graph 'silent'");
        assertThatThrownBy(() -> Scheduler.builder().failedRunsLoggedPerMinute(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("failed runs logged per minute")
                .hasMessageContaining("-1");
    }

    /** An exception every accessor of which throws: the run still ends, and a line still says so. */
    @Test
    void aCauseWhoseAccessorsThrowStillEndsTheRunAndIsStillLogged() {
        RuntimeException nasty = new RuntimeException() {
            @Override
            public String getMessage() {
                throw new IllegalStateException("getMessage threw");
            }

            @Override
            public String toString() {
                throw new IllegalStateException("toString threw");
            }

            @Override
            public StackTraceElement[] getStackTrace() {
                throw new IllegalStateException("getStackTrace threw");
            }
        };
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("nasty");
            g.task("t").cpu(ctx -> {
                throw nasty;
            });
            GraphRun run = s.submit(g);
            assertThatThrownBy(() -> run.await(Duration.ofSeconds(10))).isInstanceOf(GraphRunException.class);
        }
        assertThat(err.count("of graph 'nasty'"))
                .as("one whole line, not a half line and a second one")
                .isEqualTo(1);
        assertThat(err.text()).contains("its first cause cannot be printed");
    }
}
