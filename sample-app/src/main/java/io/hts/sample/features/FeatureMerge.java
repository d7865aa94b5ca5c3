package io.hts.sample.features;

import io.hts.sample.Format;
import java.util.ArrayList;
import java.util.List;

/**
 * The merge: checks what the shards made, then puts every row's features together. It fails, naming
 * what is wrong, when rows were lost or repeated, when a shard was not validated, when a normalised
 * column of the whole table is not at mean 0 and standard deviation 1 (within
 * {@value #TABLE_TOLERANCE}), or when one shard's normalised column is off by more than its
 * sampling error allows (6 / sqrt(rows) for the mean, 9 / sqrt(rows) for the standard deviation:
 * the rows are drawn alike, so a shard this far off was corrupted or mis-read).
 */
public final class FeatureMerge {

    /** How far the whole table's normalised moments may be from 0 and 1: rounding, nothing more. */
    public static final double TABLE_TOLERANCE = 1e-4;

    private static final int PROBLEMS_SHOWN = 4;

    private FeatureMerge() {}

    /** The tolerance of a shard's normalised mean. */
    static double meanTolerance(long rows) {
        return 6 / Math.sqrt(rows);
    }

    /** The tolerance of a shard's normalised standard deviation. */
    static double stdTolerance(long rows) {
        return 9 / Math.sqrt(rows);
    }

    /**
     * Checks and merges.
     *
     * @param expectedRows the table's rows
     * @param shards every shard's features, in shard order
     * @param validations every shard's validation
     * @return the merged features and the checks' figures
     * @throws IllegalStateException naming each failed check (the first few) and the shards concerned
     */
    public static FeatureReport merge(
            long expectedRows, List<ShardFeatures> shards, List<ShardValidation> validations) {
        List<String> problems = new ArrayList<>();
        long next = 0;
        for (ShardFeatures s : shards) {
            if (s.firstRow() != next) {
                problems.add("shard " + s.shard() + " starts at row " + Format.count(s.firstRow()) + ", expected "
                        + Format.count(next));
            }
            next = s.firstRow() + s.rows();
        }
        if (next != expectedRows) {
            problems.add("the shards hold " + Format.count(next) + " rows, the table " + Format.count(expectedRows));
        }
        if (validations.size() != shards.size()) {
            problems.add(validations.size() + " of " + shards.size() + " shards validated");
        }
        ColumnMoments table = ColumnMoments.merge(
                shards.stream().map(ShardFeatures::normalised).toList());
        double meanError = 0;
        double stdError = 0;
        for (int c = 0; c < table.columns(); c++) {
            meanError = Math.max(meanError, Math.abs(table.mean(c)));
            stdError = Math.max(stdError, Math.abs(table.std(c) - 1));
            if (!(Math.abs(table.mean(c)) <= TABLE_TOLERANCE && Math.abs(table.std(c) - 1) <= TABLE_TOLERANCE)) {
                problems.add(Format.of(
                        "normalised column %d has mean %.2e and std %.6f over the table",
                        c, table.mean(c), table.std(c)));
            }
        }
        double worst = 0;
        String worstAt = "-";
        for (ShardFeatures s : shards) {
            ColumnMoments m = s.normalised();
            double meanTolerance = meanTolerance(m.count());
            double stdTolerance = stdTolerance(m.count());
            for (int c = 0; c < m.columns(); c++) {
                double drift = Math.max(Math.abs(m.mean(c)) / meanTolerance, Math.abs(m.std(c) - 1) / stdTolerance);
                if (!(drift <= worst)) {
                    worst = drift;
                    worstAt = "shard " + s.shard() + ", column " + c;
                }
                if (!(drift <= 1)) {
                    problems.add(Format.of(
                            "shard %d (rows %s to %s) column %d drifted: normalised mean %.3f (tolerance %.3f), std %.3f"
                                    + " (1 ± %.3f)",
                            s.shard(),
                            Format.count(s.firstRow()),
                            Format.count(s.firstRow() + s.rows() - 1),
                            c,
                            m.mean(c),
                            meanTolerance,
                            m.std(c),
                            stdTolerance));
                }
            }
        }
        if (!problems.isEmpty()) {
            int more = problems.size() - PROBLEMS_SHOWN;
            throw new IllegalStateException("the merge's checks failed: "
                    + String.join("; ", problems.subList(0, Math.min(PROBLEMS_SHOWN, problems.size())))
                    + (more > 0 ? "; and " + more + " more" : ""));
        }
        return new FeatureReport(
                expectedRows,
                table.columns(),
                shards.size(),
                shards.get(0).k(),
                concatenate(expectedRows, shards),
                shards.stream().mapToLong(ShardFeatures::outliers).sum(),
                meanError,
                stdError,
                worst,
                worstAt);
    }

    /** Every shard's projected rows in one {@code rows x k} column-major matrix. */
    private static float[] concatenate(long rows, List<ShardFeatures> shards) {
        int k = shards.get(0).k();
        float[] all = new float[Math.toIntExact(rows * k)];
        for (ShardFeatures s : shards) {
            for (int j = 0; j < k; j++) {
                System.arraycopy(s.projected(), j * s.rows(), all, (int) (j * rows + s.firstRow()), s.rows());
            }
        }
        return all;
    }
}
