package io.hts.sample.features;

import dev.ludovic.netlib.blas.BLAS;

/**
 * What feature extraction makes of one normalised shard: each row projected to {@code k} features
 * (one BLAS GEMM, rows x columns times columns x k), the count of outlying values (|z| &gt; 3), and
 * the normalised columns' moments for the merge's checks.
 *
 * @param shard the shard's index
 * @param firstRow its first table row
 * @param rows its rows
 * @param k features per row
 * @param projected {@code rows x k}, column-major
 * @param normalised the moments of its normalised columns
 * @param outliers values with |z| &gt; 3
 */
public record ShardFeatures(
        int shard, long firstRow, int rows, int k, float[] projected, ColumnMoments normalised, long outliers) {

    /** The z-score beyond which a value counts as an outlier. */
    public static final double OUTLIER = 3;

    /**
     * Extracts the features of a normalised shard.
     *
     * @param z the normalised shard
     * @param projection {@code columns x k}, column-major
     * @param k features per row
     * @return the shard's features
     */
    public static ShardFeatures extract(FeatureShard z, float[] projection, int k) {
        int rows = z.rows();
        float[] p = new float[rows * k];
        BLAS.getInstance()
                .sgemm("N", "N", rows, k, z.columns(), 1f, z.values(), rows, projection, z.columns(), 0f, p, rows);
        long outliers = 0;
        for (float x : z.values()) {
            if (Math.abs(x) > OUTLIER) {
                outliers++;
            }
        }
        return new ShardFeatures(z.index(), z.firstRow(), rows, k, p, ColumnMoments.of(z), outliers);
    }
}
