/**
 * Actuator endpoints of HTS.
 */
@NullMarked
package io.hts.autoconfigure.actuate;

import org.jspecify.annotations.NullMarked;
