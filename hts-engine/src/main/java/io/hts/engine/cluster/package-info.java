/**
 * The cluster SPI: what a distributed engine (Hazelcast in {@code hts-cluster}; another could
 * implement it) offers a scheduler that runs distributed task groups in slices across JVMs.
 *
 * <p>What travels between members is never a closure. Every member registers the same graphs by name
 * ({@code Scheduler.register}); a unit of remote work ({@link io.hts.engine.cluster.SliceWork}) names
 * the graph, its {@link io.hts.engine.cluster.GraphFingerprint}, a group and a slice {@code [from, to)}
 * of its members, and carries the inputs the slice reads, encoded by a
 * {@link io.hts.engine.cluster.PayloadCodec}: small ones by value, large ones by reference into the
 * {@link io.hts.engine.cluster.PayloadStore}. The worker member runs the slice on its own scheduler and
 * answers with a {@link io.hts.engine.cluster.SliceResult}. A worker that lacks the graph, or has
 * another version of it, refuses the slice ({@link io.hts.engine.cluster.GraphRefusedException}).
 *
 * <p>Delivery is at least once: a slice whose member is lost ({@link
 * io.hts.engine.cluster.MemberLostException}) is sent again elsewhere, so a distributed group's bodies
 * must be idempotent; the coordinator accepts one outcome per slice. docs/cluster.md has the design and
 * its limits.
 */
@NullMarked
package io.hts.engine.cluster;

import org.jspecify.annotations.NullMarked;
