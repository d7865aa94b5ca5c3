/**
 * The HTS sample application: the seed's three scenarios as {@code TaskGraph} beans, run at
 * start-up, and a dashboard over the Actuator endpoints.
 */
@NullMarked
package io.hts.sample;

import org.jspecify.annotations.NullMarked;
