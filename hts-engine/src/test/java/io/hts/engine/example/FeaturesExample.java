package io.hts.engine.example;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.stream.LongStream;

// The example as README.md, docs/api.md and TaskGraph's Javadoc show it (DocExamples and FeaturesExampleTests compare
// them): not reformatted.
// spotless:off
public class FeaturesExample {

    public static void main(String[] args) {
        TaskGraph graph = TaskGraph.named("features");
        Task<long[]> load = graph.task("load").cpu(ctx -> LongStream.range(0, 8_000_000).toArray());
        TaskGroup<Long> shards = graph.group("shard", 16, (i, t) -> t.after(load).cpu(ctx -> {
            long[] rows = ctx.input(load);
            long sum = 0;
            for (int r = i; r < rows.length; r += 16) {
                sum += rows[r] * rows[r] % 1_000_003;
            }
            return sum;
        }));
        Task<Long> merge = graph.task("merge").after(shards).retries(2).timeout(Duration.ofSeconds(5))
                .cpu(ctx -> ctx.inputs(shards).stream().mapToLong(Long::longValue).sum());

        try (Scheduler scheduler = Scheduler.create()) {
            GraphRun run = scheduler.submit(graph);          // asynchronous; runs of one graph may overlap
            long total = run.await().result(merge);
            System.out.println("total = " + total);
            System.out.println(run.profile());               // makespan, critical path, where worker time went
        }
    }
}
// spotless:on
