/**
 * Scenario (a), feature engineering: a generated table of float columns, sharded; per-shard
 * statistics and a validation branch beside them, normalisation by the merged statistics, feature
 * extraction, and a merge that checks what it merges.
 */
@NullMarked
package io.hts.sample.features;

import org.jspecify.annotations.NullMarked;
