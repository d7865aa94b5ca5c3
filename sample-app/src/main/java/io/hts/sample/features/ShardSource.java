package io.hts.sample.features;

/** Where a shard's rows come from: the generated table, or in tests a corrupted copy of it. */
@FunctionalInterface
public interface ShardSource {

    /**
     * The rows {@code [firstRow, firstRow + rows)} of every column.
     *
     * @param index the shard's index
     * @param firstRow its first row
     * @param rows how many rows
     * @return the shard
     */
    FeatureShard shard(int index, long firstRow, int rows);
}
