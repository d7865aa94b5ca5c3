package io.hts.sample.features;

/** Z-scores: each column of a shard shifted by the table's mean and divided by its standard deviation. */
public final class Normalisation {

    private Normalisation() {}

    /**
     * The shard normalised by the whole table's moments, into new memory (the raw shard stays as
     * its other readers saw it).
     *
     * @param raw the raw shard
     * @param table the moments of every shard together
     * @return the normalised shard
     * @throws IllegalStateException when a column is constant over the table (nothing to scale by)
     */
    public static FeatureShard apply(FeatureShard raw, ColumnMoments table) {
        int rows = raw.rows();
        float[] v = raw.values();
        float[] z = new float[v.length];
        for (int c = 0; c < raw.columns(); c++) {
            double std = table.std(c);
            if (!(std > 0)) {
                throw new IllegalStateException("column " + c + " has standard deviation " + std + " over the table");
            }
            double mean = table.mean(c);
            double inverse = 1 / std;
            for (int r = c * rows, end = r + rows; r < end; r++) {
                z[r] = (float) ((v[r] - mean) * inverse);
            }
        }
        return new FeatureShard(raw.index(), raw.firstRow(), rows, raw.columns(), z);
    }
}
