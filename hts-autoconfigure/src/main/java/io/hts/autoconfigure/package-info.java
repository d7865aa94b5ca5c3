/**
 * Spring Boot auto-configuration of HTS: properties under {@code hts.*}, the scheduler and its
 * graceful shutdown, start-up failure analysis.
 */
@NullMarked
package io.hts.autoconfigure;

import org.jspecify.annotations.NullMarked;
