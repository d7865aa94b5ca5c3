package io.hts.sample.features;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.sample.Format;
import io.hts.sample.SampleProperties;
import io.hts.sample.SampleScenario;
import java.util.List;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/** Scenario (a) in the summary: the pipeline at {@code sample.features.*}'s scale. */
@Component
@Order(1)
public class FeatureScenario implements SampleScenario {

    private final SampleProperties.Features settings;
    private final FeaturePipeline pipeline;

    FeatureScenario(SampleProperties properties) {
        this.settings = properties.features();
        this.pipeline = FeaturePipeline.of(settings);
    }

    @Override
    public String label() {
        return "(a) features";
    }

    @Override
    public String description() {
        return Format.of(
                "%s rows x %d float columns in %d shards: stats + validation, normalise, extract %d features, merge",
                Format.count(settings.rows()), settings.columns(), settings.shards(), settings.projections());
    }

    @Override
    public TaskGraph graph() {
        return pipeline.graph();
    }

    @Override
    public List<String> results(GraphRun run) {
        FeatureReport r = run.result(pipeline.merge());
        return List.of(
                Format.of(
                        "merged %s rows x %d features; %s shards validated (no NaN/inf, all in range)",
                        Format.count(r.rows()), r.k(), Format.count(r.shards())),
                Format.of(
                        "check: normalised columns mean 0 within %.1e, std 1 within %.1e (tolerance %.0e): OK",
                        r.meanError(), r.stdError(), FeatureMerge.TABLE_TOLERANCE),
                Format.of(
                        "check: worst shard drift %s of its tolerance (%s): OK; |z| > 3 outliers %s",
                        Format.percent(r.worstDrift()), r.worstDriftAt(), Format.percent(r.outlierRate())));
    }
}
