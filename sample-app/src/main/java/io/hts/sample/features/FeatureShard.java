package io.hts.sample.features;

/**
 * Consecutive rows of every column, column by column: column {@code c} is
 * {@code values[c * rows, (c + 1) * rows)} (the layout BLAS reads as a column-major matrix).
 *
 * @param index the shard's index
 * @param firstRow the table row of its row 0
 * @param rows how many rows
 * @param columns how many columns
 * @param values {@code rows * columns} values
 */
public record FeatureShard(int index, long firstRow, int rows, int columns, float[] values) {

    public FeatureShard {
        if (values.length != rows * columns) {
            throw new IllegalArgumentException(
                    "shard " + index + ": " + values.length + " values for " + rows + " x " + columns);
        }
    }

    /** The rows it holds, as {@code rows 0 to 31,249}. */
    public String rowRange() {
        return "rows " + io.hts.sample.Format.count(firstRow) + " to "
                + io.hts.sample.Format.count(firstRow + rows - 1);
    }
}
