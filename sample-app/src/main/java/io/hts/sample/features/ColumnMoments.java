package io.hts.sample.features;

import java.util.List;

/**
 * Count, mean, sum of squared deviations, minimum and maximum of each column of some rows, in
 * double precision; moments of disjoint rows merge exactly (Chan et al.'s pairwise update), so
 * shards are summarised on their own and combined after.
 */
public final class ColumnMoments {

    private final long count;
    private final double[] mean;
    private final double[] m2;
    private final float[] min;
    private final float[] max;

    private ColumnMoments(long count, double[] mean, double[] m2, float[] min, float[] max) {
        this.count = count;
        this.mean = mean;
        this.m2 = m2;
        this.min = min;
        this.max = max;
    }

    /** The moments of a shard's columns (two passes over each column). */
    public static ColumnMoments of(FeatureShard shard) {
        int rows = shard.rows();
        int columns = shard.columns();
        float[] v = shard.values();
        double[] mean = new double[columns];
        double[] m2 = new double[columns];
        float[] min = new float[columns];
        float[] max = new float[columns];
        for (int c = 0; c < columns; c++) {
            int base = c * rows;
            double sum = 0;
            float lo = Float.POSITIVE_INFINITY;
            float hi = Float.NEGATIVE_INFINITY;
            for (int r = 0; r < rows; r++) {
                float x = v[base + r];
                sum += x;
                lo = Math.min(lo, x);
                hi = Math.max(hi, x);
            }
            double mu = sum / rows;
            double squares = 0;
            for (int r = 0; r < rows; r++) {
                double d = v[base + r] - mu;
                squares += d * d;
            }
            mean[c] = mu;
            m2[c] = squares;
            min[c] = lo;
            max[c] = hi;
        }
        return new ColumnMoments(rows, mean, m2, min, max);
    }

    /** The moments of all the parts' rows together. */
    public static ColumnMoments merge(List<ColumnMoments> parts) {
        ColumnMoments first = parts.get(0);
        int columns = first.columns();
        long n = 0;
        double[] mean = new double[columns];
        double[] m2 = new double[columns];
        float[] min = first.min.clone();
        float[] max = first.max.clone();
        for (ColumnMoments p : parts) {
            long total = n + p.count;
            for (int c = 0; c < columns; c++) {
                double delta = p.mean[c] - mean[c];
                mean[c] += delta * p.count / total;
                m2[c] += p.m2[c] + delta * delta * ((double) n * p.count / total);
                min[c] = Math.min(min[c], p.min[c]);
                max[c] = Math.max(max[c], p.max[c]);
            }
            n = total;
        }
        return new ColumnMoments(n, mean, m2, min, max);
    }

    /** Rows summarised. */
    public long count() {
        return count;
    }

    /** Columns summarised. */
    public int columns() {
        return mean.length;
    }

    /** Column {@code c}'s mean. */
    public double mean(int c) {
        return mean[c];
    }

    /** Column {@code c}'s (population) standard deviation. */
    public double std(int c) {
        return Math.sqrt(m2[c] / count);
    }

    /** Column {@code c}'s smallest value. */
    public float min(int c) {
        return min[c];
    }

    /** Column {@code c}'s largest value. */
    public float max(int c) {
        return max[c];
    }
}
