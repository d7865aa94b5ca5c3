/**
 * The HTS dashboard: static pages served by the {@code htsdashboard} Actuator endpoint that read
 * the {@code hts}, {@code htsprofiler} and {@code htsevents} endpoints.
 */
@NullMarked
package io.hts.autoconfigure.dashboard;

import org.jspecify.annotations.NullMarked;
