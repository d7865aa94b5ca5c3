/**
 * The Hazelcast implementation of the engine's cluster SPI ({@code io.hts.engine.cluster}):
 * {@link io.hts.cluster.HazelcastClusterEngine} over an embedded member the application owns. Slices
 * go to members through an {@code IExecutorService}, each member's capacity and load through a map of
 * member statuses, large payloads through a map whose entries expire. docs/cluster.md.
 */
@NullMarked
package io.hts.cluster;

import org.jspecify.annotations.NullMarked;
