package io.hts.sample.features;

import io.hts.sample.Format;
import java.util.ArrayList;
import java.util.List;

/**
 * The validation branch's verdict on one raw shard: no NaN, no infinity, every value within its
 * column's bounds. A shard that breaks any of these fails its validation task, which names the
 * shard, its rows and each offending column.
 *
 * @param shard the shard's index
 * @param checkedValues how many values were checked
 */
public record ShardValidation(int shard, long checkedValues) {

    /**
     * Checks a shard against the table's bounds.
     *
     * @param s the raw shard
     * @param table the table that says what each column may hold
     * @return the verdict, when the shard is clean
     * @throws IllegalStateException naming the shard and its problems, when it is not
     */
    public static ShardValidation check(FeatureShard s, FeatureTable table) {
        List<String> problems = new ArrayList<>();
        float[] v = s.values();
        int rows = s.rows();
        for (int c = 0; c < s.columns(); c++) {
            // a margin of rounding: the bounds are exact in double, the values are floats
            double slack = 1e-5 * (Math.abs(table.lowerBound(c)) + Math.abs(table.upperBound(c)));
            double lo = table.lowerBound(c) - slack;
            double hi = table.upperBound(c) + slack;
            long nan = 0;
            long infinite = 0;
            long outside = 0;
            for (int r = c * rows, end = r + rows; r < end; r++) {
                float x = v[r];
                if (Float.isNaN(x)) {
                    nan++;
                } else if (Float.isInfinite(x)) {
                    infinite++;
                } else if (x < lo || x > hi) {
                    outside++;
                }
            }
            if (nan + infinite + outside > 0) {
                problems.add(Format.of(
                        "column %d (%s): %s NaN, %s infinite, %s outside [%.2f, %.2f]",
                        c,
                        table.kind(c).name().toLowerCase(java.util.Locale.ROOT),
                        Format.count(nan),
                        Format.count(infinite),
                        Format.count(outside),
                        table.lowerBound(c),
                        table.upperBound(c)));
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException(
                    "shard " + s.index() + " (" + s.rowRange() + ") is invalid: " + String.join("; ", problems));
        }
        return new ShardValidation(s.index(), v.length);
    }
}
