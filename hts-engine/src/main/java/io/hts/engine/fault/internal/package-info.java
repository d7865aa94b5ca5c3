/**
 * Internal, not API: the resolution of a graph's retry and time-limit declarations into
 * Resilience4j instances, used by the scheduler. Public because Java needs it across packages, not
 * exported by this module's {@code module-info}, and changed without notice. Declare retries and
 * time limits on {@code TaskBuilder}, defaults on {@code Scheduler.builder()}.
 */
@NullMarked
package io.hts.engine.fault.internal;

import org.jspecify.annotations.NullMarked;
