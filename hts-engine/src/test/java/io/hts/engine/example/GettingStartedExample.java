package io.hts.engine.example;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.TaskFailure;
import java.time.Duration;
import java.util.stream.IntStream;

/**
 * The plain-Java part of docs/getting-started.md: a graph, a scheduler, a run, its result and
 * profile, and a failure. {@code DocExamples} checks that the page shows it as written;
 * {@code GettingStartedExampleTests} runs it.
 */
public final class GettingStartedExample {

    private GettingStartedExample() {}

    // Shown in docs/getting-started.md as written (DocExamples compares them): not reformatted.
    // spotless:off
    public static void main(String[] args) {
        TaskGraph graph = TaskGraph.named("squares");
        Task<int[]> load = graph.task("load").cpu(ctx -> IntStream.rangeClosed(1, 1_000).toArray());
        TaskGroup<Long> parts = graph.group("part", 4, (i, t) -> t.after(load)
                .cpu(ctx -> sumOfSquares(ctx.input(load), i)));
        Task<Long> total = graph.task("total").after(parts).retries(2).timeout(Duration.ofSeconds(10))
                .cpu(ctx -> ctx.inputs(parts).stream().mapToLong(Long::longValue).sum());

        try (Scheduler scheduler = Scheduler.builder().threads(4).build()) {
            GraphRun run = scheduler.execute(graph);          // submit, then wait for the end
            System.out.println("sum of squares = " + run.result(total));
            System.out.println(run.profile());                // makespan, critical path, where worker time went

            TaskGraph broken = TaskGraph.named("broken");
            broken.task("divide").cpu(ctx -> 1 / (ctx.attempt() - 1)); // attempt 1 divides by zero
            try {
                scheduler.execute(broken);
            } catch (GraphRunException e) {
                for (TaskFailure f : e.failures()) {
                    System.out.println(f.taskName() + " failed after " + f.attempts() + " attempt(s): " + f.error());
                }
            }
        }
    }
    // spotless:on

    /** The sum of the squares of every fourth number, from the {@code i}-th. */
    static long sumOfSquares(int[] numbers, int i) {
        long sum = 0;
        for (int k = i; k < numbers.length; k += 4) {
            sum += (long) numbers[k] * numbers[k];
        }
        return sum;
    }
}
