/**
 * Internal, not API: the hooks through which the engine's own extensions plug into the run kernel
 * ({@code io.hts.engine.run}). Today there is one extension, cluster distribution
 * ({@code io.hts.engine.cluster.internal}); the kernel defines these types and never depends on
 * an implementation of them, so the arrow goes one way: distribution to kernel.
 *
 * <p>Named {@code .internal} because every package of this module is exported or ends in
 * {@code .internal} (ModuleBoundaryTests): public because Java needs it across packages, not
 * exported by {@code module-info}, and changed without notice.
 *
 * <p><b>The two sides.</b> The kernel implements the handles an extension is given:
 * {@link io.hts.engine.run.internal.SchedulerHandle} (the scheduler),
 * {@link io.hts.engine.run.internal.RunHandle} (one run) and
 * {@link io.hts.engine.run.internal.AttemptHandle} (one attempt of a task the extension owns).
 * The extension implements {@link io.hts.engine.run.internal.ExtensionFactory} (found by
 * {@link java.util.ServiceLoader}: {@code provides} in {@code module-info}, and
 * {@code META-INF/services} on the class path), which makes one
 * {@link io.hts.engine.run.internal.SchedulerExtension} per scheduler built with
 * {@code SchedulerBuilder.cluster(...)}; that answers, once per graph, a
 * {@link io.hts.engine.run.internal.GraphExtension} (which tasks it owns), which makes one
 * {@link io.hts.engine.run.internal.RunExtension} per run.
 *
 * <p><b>Zero cost when unused.</b> A scheduler without a cluster has no extension; a graph whose
 * tasks the extension does not own has none in its execution plan, and its runs none. Which tasks
 * an extension owns is asked once per graph and kept in the graph's execution plan (such a task
 * is never a worker's continuation), so the per-task path asks the extension nothing: it reads a
 * null field, as it did before the hooks.
 *
 * <p><b>Ownership.</b> The kernel's rule holds across the hooks: every state change that threads
 * race for is one compare-and-set, and only its winner acts. Each hook says which winner calls it.
 * An extension's own races (a slice's phase, a member's slot) follow the same rule on its side.
 */
@NullMarked
package io.hts.engine.run.internal;

import org.jspecify.annotations.NullMarked;
