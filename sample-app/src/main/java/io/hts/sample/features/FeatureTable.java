package io.hts.sample.features;

/**
 * The synthetic table: every value a function of (seed, row, column) alone, so a shard is the same
 * however the table is cut. Column kinds cycle through normal, uniform, exponential and bimodal;
 * column {@code c} is located at {@code 10 (c - columns / 2)} and scaled by {@code 1 + c / 4}, and
 * each kind has hard bounds that the validation branch checks.
 */
public final class FeatureTable implements ShardSource {

    /** The distribution of a column. */
    public enum Kind {
        /** Irwin-Hall of four uniforms, standardised: bell-shaped within 3.47 standard deviations. */
        NORMAL,
        /** Uniform with unit variance. */
        UNIFORM,
        /** Exponential (one tail, to 37 scales). */
        EXPONENTIAL,
        /** Two bells at -1.5 and +1.5. */
        BIMODAL
    }

    private static final double SQRT3 = Math.sqrt(3);
    private static final double BELL = 2 * SQRT3; // the Irwin-Hall bell's bound, in standard deviations

    private final long seed;
    private final int columns;

    /**
     * @param seed the generator's seed
     * @param columns how many columns
     */
    public FeatureTable(long seed, int columns) {
        this.seed = mix(seed);
        this.columns = columns;
    }

    /** How many columns. */
    public int columns() {
        return columns;
    }

    /** The kind of column {@code c}. */
    public Kind kind(int c) {
        return Kind.values()[c % 4];
    }

    /** Where column {@code c} is located. */
    public double location(int c) {
        return 10.0 * (c - columns / 2);
    }

    /** Column {@code c}'s scale. */
    public double scale(int c) {
        return 1 + c / 4.0;
    }

    /** The smallest value column {@code c} can hold. */
    public double lowerBound(int c) {
        return location(c) + scale(c) * standardBounds(kind(c))[0];
    }

    /** The largest value column {@code c} can hold. */
    public double upperBound(int c) {
        return location(c) + scale(c) * standardBounds(kind(c))[1];
    }

    private static double[] standardBounds(Kind kind) {
        return switch (kind) {
            case NORMAL -> new double[] {-BELL, BELL};
            case UNIFORM -> new double[] {-SQRT3, SQRT3};
            case EXPONENTIAL -> new double[] {0, 53 * Math.log(2)};
            case BIMODAL -> new double[] {-1.5 - BELL / 2, 1.5 + BELL / 2};
        };
    }

    /** The value at ({@code row}, {@code c}). */
    public float value(long row, int c) {
        return (float) (location(c) + scale(c) * standard(kind(c), hash(row, c)));
    }

    @Override
    public FeatureShard shard(int index, long firstRow, int rows) {
        float[] values = new float[rows * columns];
        for (int c = 0; c < columns; c++) {
            double location = location(c);
            double scale = scale(c);
            Kind kind = kind(c);
            int base = c * rows;
            for (int r = 0; r < rows; r++) {
                values[base + r] = (float) (location + scale * standard(kind, hash(firstRow + r, c)));
            }
        }
        return new FeatureShard(index, firstRow, rows, columns, values);
    }

    /**
     * A fixed random projection of a normalised row to {@code k} features: a {@code columns x k}
     * column-major matrix with entries of variance {@code 1 / columns}.
     */
    public float[] projection(int k) {
        float[] w = new float[columns * k];
        double norm = 1 / Math.sqrt(columns);
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) (norm * standard(Kind.NORMAL, mix(seed ^ ~i)));
        }
        return w;
    }

    private long hash(long row, int c) {
        return mix(seed + (row * columns + c) * 0x9E3779B97F4A7C15L);
    }

    /** A value of the kind's standard form (before location and scale) from 64 random bits. */
    private static double standard(Kind kind, long bits) {
        return switch (kind) {
            case NORMAL -> bell(bits);
            case UNIFORM -> SQRT3 * (2 * unit(bits) - 1);
            case EXPONENTIAL -> -Math.log(((bits >>> 11) + 1) * 0x1.0p-53);
            case BIMODAL -> ((bits & 1) == 0 ? -1.5 : 1.5) + bell(bits) / 2;
        };
    }

    /** Four 16-bit uniforms summed and standardised. */
    private static double bell(long bits) {
        double sum =
                ((bits & 0xFFFF) + ((bits >>> 16) & 0xFFFF) + ((bits >>> 32) & 0xFFFF) + (bits >>> 48) + 2.0) / 65536.0;
        return (sum - 2) * SQRT3;
    }

    private static double unit(long bits) {
        return (bits >>> 11) * 0x1.0p-53;
    }

    /** SplitMix64's finaliser. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
