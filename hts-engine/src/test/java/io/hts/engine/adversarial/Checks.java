package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.support.Ended;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/** Shared checks of the engine's promises. */
final class Checks {

    private Checks() {}

    /** Awaits the run (bounded); returns the GraphRunException thrown, or null on success. */
    static GraphRunException awaitEnd(GraphRun run, Duration max) {
        return Ended.failure(run, max);
    }

    /** Every task final, status consistent with the states. */
    static void assertConsistent(GraphRun run) {
        assertThat(run.isDone()).as("done: %s", run).isTrue();
        Map<String, TaskState> states = run.states();
        for (Map.Entry<String, TaskState> e : states.entrySet()) {
            assertThat(e.getValue().isTerminal())
                    .as("task %s final, states %s", e.getKey(), states)
                    .isTrue();
        }
        RunStatus st = run.status();
        boolean anyFailed = states.containsValue(TaskState.FAILED);
        boolean anyCancelled = states.containsValue(TaskState.CANCELLED);
        if (anyFailed) {
            assertThat(st).as("status with a FAILED task, states %s", states).isEqualTo(RunStatus.FAILED);
        } else if (anyCancelled) {
            assertThat(st).as("status with CANCELLED tasks, states %s", states).isIn(RunStatus.CANCELLED);
        } else {
            assertThat(st)
                    .as("status with all SUCCEEDED, states %s", states)
                    .isIn(RunStatus.SUCCEEDED, RunStatus.CANCELLED);
        }
        assertThat(run.pendingTasks()).isZero();
        for (Task<?> t : run.graph().tasks()) {
            TaskState s = run.state(t);
            if (s == TaskState.FAILED || s == TaskState.CANCELLED) {
                assertThat(run.error(t)).as("error of %s (%s)", t, s).isPresent();
            }
        }
    }

    static Set<Thread> threads() {
        return Thread.getAllStackTraces().keySet();
    }
}
