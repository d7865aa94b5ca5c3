/**
 * Internal, not API: the event bus the run layer publishes to and the ring buffer behind
 * {@code Scheduler.eventLog()}. Public because Java needs it across packages, not exported by this
 * module's {@code module-info}, and changed without notice. Subscribe through
 * {@code Scheduler.addListener} or the builder's {@code listener}.
 */
@NullMarked
package io.hts.engine.observe.internal;

import org.jspecify.annotations.NullMarked;
