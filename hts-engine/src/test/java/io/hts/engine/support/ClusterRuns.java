package io.hts.engine.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

/** What the cluster's break tests check of every run: that it ends, every task in one final state. */
public final class ClusterRuns {

    private ClusterRuns() {}

    /** The results of a group of {@code n} members whose member {@code i} returns {@code 1000 + i}. */
    public static List<Integer> expected(int n) {
        return IntStream.range(0, n).map(i -> 1_000 + i).boxed().toList();
    }

    /** Waits up to {@code wait} for the run to end (a failed run ends too); every task is then in a final state. */
    public static GraphRun ended(GraphRun run, Duration wait) {
        Ended.failure(run, wait);
        assertThat(run.states().values()).allMatch(TaskState::isTerminal);
        return run;
    }
}
