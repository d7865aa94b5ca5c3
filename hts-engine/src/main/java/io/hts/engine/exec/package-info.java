/**
 * The execution layer: the work-stealing pool and its deques, the resource limiter, and the device-backend SPI.
 */
@NullMarked
package io.hts.engine.exec;

import org.jspecify.annotations.NullMarked;
