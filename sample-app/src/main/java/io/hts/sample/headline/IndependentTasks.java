package io.hts.sample.headline;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.util.List;

/** The seed's first target: {@code count} independent tasks, {@code task[i]} spinning from seed {@code i}. */
public final class IndependentTasks {

    private final TaskGraph graph;
    private final TaskGroup<Long> tasks;

    /**
     * @param count how many tasks
     * @param spin each task's work
     */
    public IndependentTasks(int count, CalibratedSpin spin) {
        this.graph = TaskGraph.named("independent");
        this.tasks = graph.group("task", count, (i, t) -> t.cpu(ctx -> spin.work(i)));
    }

    /** The graph. */
    public TaskGraph graph() {
        return graph;
    }

    /** The tasks. */
    public TaskGroup<Long> tasks() {
        return tasks;
    }

    /** The results summed (wrapping): one number that every task's result changes. */
    public static long checksum(List<Long> results) {
        long sum = 0;
        for (long r : results) {
            sum += r;
        }
        return sum;
    }
}
