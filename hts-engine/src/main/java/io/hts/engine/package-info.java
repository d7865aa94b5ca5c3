/**
 * HTS engine: task graphs scheduled over CPU cores (a work-stealing pool) and devices such as GPUs
 * (through the {@link io.hts.engine.exec.DeviceBackend} SPI). Start with
 * {@link io.hts.engine.graph.TaskGraph} and {@link io.hts.engine.run.Scheduler}. No Spring here.
 */
@NullMarked
package io.hts.engine;

import org.jspecify.annotations.NullMarked;
