package io.hts.engine.example;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBarrier;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.LongStream;

/**
 * The examples of docs/engine.md: a graph with a group and a barrier, its run, and a body that
 * runs a nested graph. {@code DocExamples} checks that the page shows them as written;
 * {@code WordCountExampleTests} runs them.
 */
public final class WordCountExample {

    static final String TEXT = """
            the quick brown fox
            jumps over the lazy dog
            the dog sleeps
            the fox runs
            a quick fox and a lazy dog
            """;

    private WordCountExample() {}

    // Shown in docs/engine.md as written (DocExamples compares them): not reformatted.
    // spotless:off
    /** Counts the words of {@link #TEXT} in four shards, and prints the counts and the audit's line. */
    static void countWords() {
        TaskGraph graph = TaskGraph.named("word-count");
        Task<List<String>> load = graph.task("load").cpu(ctx -> TEXT.lines().toList());
        TaskGroup<Map<String, Long>> shards = graph.group("shard", 4, (i, t) -> t.after(load)
                .cpu(ctx -> count(ctx.input(load), i, 4)));
        Task<Map<String, Long>> merge = graph.task("merge").after(shards)
                .cpu(ctx -> merge(ctx.inputs(shards)));
        TaskBarrier counted = graph.barrier("counted").after(shards);
        Task<String> audit = graph.task("audit").after(counted)
                .cpu(ctx -> "4 shards counted in run " + ctx.runId());

        try (Scheduler scheduler = Scheduler.builder().threads(4).build()) {
            GraphRun run = scheduler.submit(graph);                 // asynchronous
            Map<String, Long> counts = run.await().result(merge);   // GraphRunException if it failed
            System.out.println(counts + "; " + run.result(audit));
        }
    }

    /** A body that runs another graph and waits for it: the sum of 1..100, computed by a nested run. */
    static long nested() {
        TaskGraph subgraph = TaskGraph.named("sum");
        Task<Long> total = subgraph.task("total").cpu(ctx -> LongStream.rangeClosed(1, 100).sum());
        TaskGraph graph = TaskGraph.named("outer");
        Task<Long> parent = graph.task("parent").cpu(ctx -> ctx.execute(subgraph).result(total));
        try (Scheduler scheduler = Scheduler.builder().threads(1).build()) {
            return scheduler.execute(graph).result(parent);
        }
    }
    // spotless:on

    /** The words of every {@code n}-th line from line {@code i}, counted. */
    static Map<String, Long> count(List<String> lines, int i, int n) {
        Map<String, Long> counts = new TreeMap<>();
        for (int l = i; l < lines.size(); l += n) {
            for (String word : lines.get(l).split(" ")) {
                counts.merge(word, 1L, Long::sum);
            }
        }
        return counts;
    }

    static Map<String, Long> merge(List<Map<String, Long>> parts) {
        Map<String, Long> all = new TreeMap<>();
        parts.forEach(part -> part.forEach((word, n) -> all.merge(word, n, Long::sum)));
        return all;
    }

    public static void main(String[] args) {
        countWords();
        System.out.println("nested: " + nested());
    }
}
