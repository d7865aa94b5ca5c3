/**
 * Internal, not API: the work-stealing pool, its deques and idle-worker stack, the priority lane
 * and the resource limiter. The scheduler ({@code io.hts.engine.run}) is their only user; they are
 * public because Java needs it across packages, are not exported by this module's
 * {@code module-info}, and change without notice. Configure the pool through
 * {@code Scheduler.builder()}.
 */
@NullMarked
package io.hts.engine.exec.internal;

import org.jspecify.annotations.NullMarked;
