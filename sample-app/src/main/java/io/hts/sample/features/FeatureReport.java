package io.hts.sample.features;

/**
 * The merged result of feature engineering and the figures of the checks it passed.
 *
 * @param rows rows merged (the table's rows: the merge checks none was lost)
 * @param columns the table's columns
 * @param shards shards merged
 * @param k features per row
 * @param features {@code rows x k}, column-major: every row's projected features
 * @param outliers normalised values with |z| &gt; 3
 * @param meanError the largest |mean| of a normalised column over the whole table
 * @param stdError the largest |std - 1| of a normalised column over the whole table
 * @param worstDrift the largest deviation of a shard's normalised column from mean 0 / std 1, as a
 *     fraction of its tolerance (below 1 passes)
 * @param worstDriftAt where that was, as {@code shard 3, column 5}
 */
public record FeatureReport(
        long rows,
        int columns,
        int shards,
        int k,
        float[] features,
        long outliers,
        double meanError,
        double stdError,
        double worstDrift,
        String worstDriftAt) {

    /** Outliers as a fraction of all values. */
    public double outlierRate() {
        return (double) outliers / ((double) rows * columns);
    }
}
