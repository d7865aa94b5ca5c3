/**
 * Scenario (d), the seed's headline workloads: 10,000 independent tasks of 0.5 ms and a 5,000-node
 * DAG of depth 100, each task a calibrated spin of real arithmetic, measured against the ideal.
 */
@NullMarked
package io.hts.sample.headline;

import org.jspecify.annotations.NullMarked;
