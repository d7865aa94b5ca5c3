package io.hts.sample.features;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.TaskFailure;
import io.hts.sample.SampleProperties;
import io.hts.sample.SmallSample;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Scenario (a) at a small scale: the merged features are the direct computation's, and the checks catch a bad shard. */
@SmallSample
class FeaturePipelineTests {

    @Autowired
    Scheduler scheduler;

    @Autowired
    SampleProperties properties;

    @Autowired
    FeatureScenario scenario;

    @Test
    void theMergedFeaturesAreTheRowsNormalisedAndProjectedDirectly() {
        SampleProperties.Features s = properties.features();
        FeaturePipeline pipeline = FeaturePipeline.of(s);
        FeatureReport report = scheduler.submit(pipeline.graph()).await().result(pipeline.merge());

        FeatureTable table = new FeatureTable(s.seed(), s.columns());
        int rows = s.rows();
        double[] mean = new double[s.columns()];
        double[] std = new double[s.columns()];
        for (int c = 0; c < s.columns(); c++) {
            double sum = 0;
            for (int r = 0; r < rows; r++) {
                sum += table.value(r, c);
            }
            mean[c] = sum / rows;
            double squares = 0;
            for (int r = 0; r < rows; r++) {
                squares += Math.pow(table.value(r, c) - mean[c], 2);
            }
            std[c] = Math.sqrt(squares / rows);
        }
        float[] w = table.projection(s.projections());
        assertThat(report.rows()).isEqualTo(rows);
        assertThat(report.shards()).isEqualTo(s.shards());
        assertThat(report.features()).hasSize(rows * s.projections());
        for (int r : new int[] {0, 1, rows / 2, rows / s.shards() - 1, rows / s.shards(), rows - 1}) {
            for (int j = 0; j < s.projections(); j++) {
                double expected = 0;
                for (int c = 0; c < s.columns(); c++) {
                    expected += (table.value(r, c) - mean[c]) / std[c] * w[c + j * s.columns()];
                }
                assertThat(report.features()[j * rows + r])
                        .as("row %d feature %d", r, j)
                        .isCloseTo((float) expected, within(1e-4f));
            }
        }
        assertThat(report.meanError()).isLessThanOrEqualTo(FeatureMerge.TABLE_TOLERANCE);
        assertThat(report.stdError()).isLessThanOrEqualTo(FeatureMerge.TABLE_TOLERANCE);
        assertThat(report.worstDrift()).isBetween(0.0, 1.0);
    }

    @Test
    void theScenarioSummarisesItsChecks() {
        GraphRun run = scheduler.submit(scenario.graph()).await();
        assertThat(String.join("\n", scenario.results(run)))
                .contains("merged 20,000 rows x 3 features", "8 shards validated", "std 1 within", ": OK");
        assertThat(run.profile().tasks()).hasSize(5 * properties.features().shards() + 3);
    }

    /** Runs the pipeline on the generated table with one shard's values changed by {@code corruption}. */
    private GraphRun runCorrupted(int corrupted, java.util.function.BiConsumer<FeatureTable, FeatureShard> corruption) {
        SampleProperties.Features s = properties.features();
        FeatureTable table = new FeatureTable(s.seed(), s.columns());
        ShardSource source = (index, firstRow, rows) -> {
            FeatureShard shard = table.shard(index, firstRow, rows);
            if (index == corrupted) {
                corruption.accept(table, shard);
            }
            return shard;
        };
        return scheduler.submit(
                FeaturePipeline.build("features-corrupted", s, table, source).graph());
    }

    @Test
    void aShardWithAStuckColumnFailsTheMergeNamingThatShard() {
        // column 5 reads one value all along: in range, not NaN, wrong
        GraphRun run = runCorrupted(
                3,
                (table, shard) ->
                        Arrays.fill(shard.values(), 5 * shard.rows(), 6 * shard.rows(), (float) table.location(5)));

        assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.failures()).singleElement().satisfies(f -> {
            assertThat(f.taskName()).isEqualTo("merge");
            assertThat(f.error().getMessage())
                    .contains("shard 3 (rows 7,500 to 9,999) column 5 drifted")
                    .doesNotContain("shard 0", "shard 1 ", "shard 2", "shard 4", "shard 5", "shard 6", "shard 7");
        });
    }

    @Test
    void aShardWithNaNsFailsItsValidationBeforeItsStatisticsAreUsed() {
        GraphRun run = runCorrupted(6, (table, shard) -> {
            for (int r = 0; r < 10; r++) {
                shard.values()[shard.rows() + 17 * r] = Float.NaN; // column 1
            }
        });

        assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class).hasMessageContaining("validate[6]");
        assertThat(run.failures()).extracting(TaskFailure::taskName).containsExactly("validate[6]");
        assertThat(run.failures().get(0).error())
                .hasMessage("shard 6 (rows 15,000 to 17,499) is invalid: column 1 (uniform): 10 NaN, 0 infinite,"
                        + " 0 outside [-32.17, -27.83]");
        assertThat(run.states())
                .containsEntry("combine", TaskState.CANCELLED)
                .containsEntry("normalise[0]", TaskState.CANCELLED);
    }
}
