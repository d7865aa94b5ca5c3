package io.hts.sample.features;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.sample.SampleProperties;

/**
 * The feature-engineering graph. Per shard {@code i}: {@code generate[i]} makes the raw rows; beside
 * each other, {@code stats[i]} summarises them and {@code validate[i]} checks them; once every
 * shard is summarised and validated, {@code combine} merges the statistics (an invalid shard
 * never reaches them: its validation fails the run first); {@code normalise[i]} writes z-scores;
 * {@code extract[i]} projects each row to k features; {@code merge} checks the lot and puts the
 * rows together.
 */
public final class FeaturePipeline {

    private final TaskGraph graph;
    private final Task<FeatureReport> merge;

    private FeaturePipeline(TaskGraph graph, Task<FeatureReport> merge) {
        this.graph = graph;
        this.merge = merge;
    }

    /** The pipeline over the generated table the settings describe, as graph {@code features}. */
    public static FeaturePipeline of(SampleProperties.Features settings) {
        FeatureTable table = new FeatureTable(settings.seed(), settings.columns());
        return build("features", settings, table, table);
    }

    /**
     * The pipeline over rows from any source.
     *
     * @param name the graph's name
     * @param settings rows, shards and features per row
     * @param table what each column may hold (the validation's bounds) and the projection
     * @param source where shards come from
     * @return the pipeline
     */
    public static FeaturePipeline build(
            String name, SampleProperties.Features settings, FeatureTable table, ShardSource source) {
        int shards = settings.shards();
        long rows = settings.rows();
        int k = settings.projections();
        TaskGraph g = TaskGraph.named(name);
        Task<float[]> projection = g.task("projection").cpu(ctx -> table.projection(k));
        TaskGroup<FeatureShard> generate = g.group(
                "generate",
                shards,
                (i, t) -> t.cpu(ctx -> {
                    long first = firstRow(rows, shards, i);
                    return source.shard(i, first, (int) (firstRow(rows, shards, i + 1) - first));
                }));
        TaskGroup<ColumnMoments> stats = g.group(
                "stats",
                shards,
                (i, t) -> t.after(generate.get(i)).cpu(ctx -> ColumnMoments.of(ctx.input(generate.get(i)))));
        TaskGroup<ShardValidation> validate = g.group(
                "validate",
                shards,
                (i, t) ->
                        t.after(generate.get(i)).cpu(ctx -> ShardValidation.check(ctx.input(generate.get(i)), table)));
        Task<ColumnMoments> combine =
                g.task("combine").after(stats, validate).cpu(ctx -> ColumnMoments.merge(ctx.inputs(stats)));
        TaskGroup<FeatureShard> normalise = g.group(
                "normalise",
                shards,
                (i, t) -> t.after(generate.get(i), combine)
                        .cpu(ctx -> Normalisation.apply(ctx.input(generate.get(i)), ctx.input(combine))));
        TaskGroup<ShardFeatures> extract = g.group(
                "extract",
                shards,
                (i, t) -> t.after(normalise.get(i), projection)
                        .cpu(ctx -> ShardFeatures.extract(ctx.input(normalise.get(i)), ctx.input(projection), k)));
        Task<FeatureReport> merge = g.task("merge")
                .after(extract, validate)
                .cpu(ctx -> FeatureMerge.merge(rows, ctx.inputs(extract), ctx.inputs(validate)));
        return new FeaturePipeline(g, merge);
    }

    /** The first row of shard {@code i} of {@code shards} (shard sizes differ by one at most). */
    static long firstRow(long rows, int shards, int i) {
        return rows * i / shards;
    }

    /** The graph. */
    public TaskGraph graph() {
        return graph;
    }

    /** The merge, whose result is the run's. */
    public Task<FeatureReport> merge() {
        return merge;
    }
}
