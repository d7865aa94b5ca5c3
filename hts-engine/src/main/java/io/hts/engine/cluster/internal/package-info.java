/**
 * Internal, not API: cluster distribution, the engine's side of the cluster SPI
 * ({@code io.hts.engine.cluster}). It cuts a run's distributed groups into slices
 * ({@link io.hts.engine.cluster.internal.GroupSlices}), delivers them to members of the cluster and
 * acts on their answers ({@link io.hts.engine.cluster.internal.SliceDeliveries}), moves values as
 * payloads ({@link io.hts.engine.cluster.internal.PayloadTransfer}), and runs the slices other
 * members send ({@link io.hts.engine.cluster.internal.SliceService}).
 *
 * <p>It sits above the run kernel and plugs into it only through the kernel's hooks
 * ({@code io.hts.engine.run.internal}): {@link io.hts.engine.cluster.internal.ClusterDistribution}
 * is the kernel's {@code ExtensionFactory}, {@link io.hts.engine.cluster.internal.ClusterLink} the
 * scheduler's extension, {@link io.hts.engine.cluster.internal.ClusterPlan} a graph's,
 * {@link io.hts.engine.cluster.internal.DistributedRun} a run's. The kernel never names this
 * package. Public types only where Java needs them (the service provider); not exported by this
 * module's {@code module-info}, and changed without notice.
 */
@NullMarked
package io.hts.engine.cluster.internal;

import org.jspecify.annotations.NullMarked;
