/**
 * Internal, not API: the compiled, int-indexed form of a task graph the scheduler runs. Public
 * because Java needs it across packages, not exported by this module's {@code module-info}, and
 * changed without notice. {@code TaskGraph.compile()} gives users the graph's shape.
 */
@NullMarked
package io.hts.engine.graph.internal;

import org.jspecify.annotations.NullMarked;
