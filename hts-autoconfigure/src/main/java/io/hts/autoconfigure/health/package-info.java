/**
 * The {@code hts} health contributor ({@link io.hts.autoconfigure.health.HtsHealthIndicator}) and
 * its auto-configuration, present when Spring Boot's health support is on the class path.
 */
@NullMarked
package io.hts.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
