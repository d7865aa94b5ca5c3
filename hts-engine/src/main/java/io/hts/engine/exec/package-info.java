/**
 * The device-backend SPI ({@link io.hts.engine.exec.DeviceBackend}, {@link io.hts.engine.exec.DeviceTask}),
 * which GPU modules implement, and the worker pool's counters as the scheduler reports them
 * ({@link io.hts.engine.exec.PoolStats}). The pool itself is in {@code io.hts.engine.exec.internal}.
 */
@NullMarked
package io.hts.engine.exec;

import org.jspecify.annotations.NullMarked;
